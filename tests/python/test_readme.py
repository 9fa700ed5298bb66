"""The README's Python block runs as written (in a scratch directory with the data), and
what its comments claim holds: its model file is train's."""
import os
import re
import subprocess
import sys

from conftest import DATA, TOP, run


def test_readme_python_example(tmp_path):
    text = open(os.path.join(TOP, "README.md")).read()
    block = re.search(r"## Python\n.*?```python\n(.*?)```", text, re.S)
    assert block, "README.md has a ## Python section with a python block"
    os.symlink(DATA, str(tmp_path / "data"))
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "python"))
    p = subprocess.run([sys.executable, "-c", block.group(1)], cwd=str(tmp_path), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    acc, last = p.stdout.decode().splitlines()
    cv = run("train", "-v", "5", "-s", "l1svm", "-c", "1", os.path.join(DATA, "heart_scale"))
    assert cv == "Cross Validation Accuracy = %g%%\n" % float(acc)
    assert last.endswith(" True")
    run("train", "-q", "-s", "l1svm", "-t", "rbf", "-g", "0.05", "-c", "1",
        os.path.join(DATA, "heart_scale"), tmp_path / "cli.model")
    assert (tmp_path / "heart.model").read_bytes() == (tmp_path / "cli.model").read_bytes()
