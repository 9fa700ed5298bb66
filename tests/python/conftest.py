"""pytest set-up of the Python module's tests: the package from python/, the executables
from KMTK_BIN (tests/cli/python.sh sets it and KMTK_LIB to the build's library)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "python"))
BIN = os.path.abspath(os.environ.get("KMTK_BIN", TOP))
DATA = os.path.join(TOP, "data")


def run(*args, **kw):
    """Runs an executable of the build (BIN/name) and returns its stdout; fails the test
    with its stderr when it fails."""
    args = [os.path.join(BIN, args[0])] + [str(a) for a in args[1:]]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        pytest.fail("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()))
    return p.stdout.decode()


@pytest.fixture
def heart():
    return os.path.join(DATA, "heart_scale")
