# kmtk - kernel machines toolkit.  make | make check | make check-asan | make install PREFIX=...
#                                  make fuzz | make fuzz-smoke FUZZ_SECONDS=40 (clang, tests/fuzz)
CC      ?= gcc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WERROR  ?=
XCFLAGS  = -std=c11 -D_GNU_SOURCE $(XCPPFLAGS) -fno-trapping-math -fopenmp -Wall -Wextra -Wshadow -Wstrict-prototypes $(WERROR) $(SAN)
OUT     ?= .
O       := $(if $(filter .,$(OUT)),,$(OUT)/)
MAKEFLAGS += -r
BUILD   ?= build
PREFIX  ?= /usr/local

# Dependencies through pkg-config; a missing one names the Debian package to install.
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifeq ($(shell command -v pkg-config),)
$(error pkg-config not found: apt-get install pkg-config)
endif
define need_pkg
ifneq ($$(shell pkg-config --exists $(1) && echo yes),yes)
$$(error $(1) not found by pkg-config: apt-get install $(2))
endif
endef
$(eval $(call need_pkg,openblas,libopenblas-dev))
$(eval $(call need_pkg,lapacke,liblapacke-dev))
$(eval $(call need_pkg,zlib,zlib1g-dev))
PKG_CFLAGS := $(shell pkg-config --cflags openblas lapacke zlib)
PKG_LIBS   := $(shell pkg-config --libs openblas lapacke zlib)
endif
LDLIBS = -fopenmp $(PKG_LIBS) -lm

PROGS     = train predict rls2-path mtl-server mtl-client scale
LIB_SRC   = $(wildcard common/*.c)
LIB_OBJ   = $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC  = $(wildcard tests/unit/test_*.c)
TEST_BIN  = $(TEST_SRC:tests/unit/%.c=$(O)tests/%)
TOOL_SRC  = $(wildcard datasets/*.c bench/*.c bench/*/*.c doc/*.c)
TOOL_BIN  = $(TOOL_SRC:%.c=$(O)%)

# The shared library: the same objects as libkmtk.a, position-independent; only what
# common/kmtk.h declares is exported (the header sets default visibility, the rest is
# hidden). $(O)lib/libkmtk.so.VERSION, soname libkmtk.so.MAJOR; kmtk.pc for PREFIX.
VERSION     := $(shell sed -n 's/^\#define KMTK_VERSION "\(.*\)"/\1/p' common/kmtk.h)
SONAME       = libkmtk.so.$(firstword $(subst ., ,$(VERSION)))
SHLIB        = $(O)lib/libkmtk.so.$(VERSION)
SHLIB_LINKS  = $(O)lib/$(SONAME) $(O)lib/libkmtk.so
SHLIB_OBJ    = $(filter-out $(BUILD)/common/cli.o,$(LIB_OBJ))
PC_SED       = -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(LDLIBS)|'
all: $(PROGS:%=$(O)%) $(TOOL_BIN) $(SHLIB_LINKS) $(BUILD)/kmtk.pc

$(BUILD)/%.o: %.c $(wildcard common/*.h bench/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PIC) $(PKG_CFLAGS) -Icommon -Itests -c $< -o $@

$(LIB_OBJ): PIC = -fPIC -fvisibility=hidden -fno-semantic-interposition

$(SHLIB): $(SHLIB_OBJ)
	@mkdir -p $(dir $@)
	printf '{ global: km_*; local: *; };\n' >$(BUILD)/libkmtk.map  # (OpenMP's lock names)
	$(CC) $(CFLAGS) $(SAN) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(BUILD)/libkmtk.map \
	  $^ $(LDLIBS) -o $@

$(SHLIB_LINKS): $(SHLIB)
	ln -sf $(notdir $<) $@

$(BUILD)/kmtk.pc: kmtk.pc.in common/kmtk.h Makefile
	@mkdir -p $(dir $@)
	sed $(PC_SED) $< >$@

$(BUILD)/libkmtk.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(PROGS:%=$(O)%) $(TOOL_BIN): $(O)%: $(BUILD)/%.o $(BUILD)/libkmtk.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $< $(BUILD)/libkmtk.a $(LDLIBS) -o $@

$(TEST_BIN): $(O)tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libkmtk.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $< $(BUILD)/libkmtk.a $(LDLIBS) -o $@

check: all $(TEST_BIN)
	tests/run.sh $(OUT)

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer, built apart.
ASAN_MAKE = $(MAKE) OUT=build/asan BUILD=build/asan OPT=-O1 \
  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
check-asan:
	$(ASAN_MAKE) check

# make install PREFIX=... DESTDIR=...: the programs as kmtk-NAME, the library, kmtk.h,
# kmtk.pc, the man pages and the documents they cite; make uninstall removes just those.
DOCS       = $(wildcard doc/*.md doc/*.svg) doc/example.c
I          = $(DESTDIR)$(PREFIX)
install: $(PROGS:%=$(O)%) $(SHLIB)
	install -d $(I)/bin $(I)/lib/pkgconfig $(I)/include $(I)/share/man/man1 $(I)/share/doc/kmtk
	for p in $(PROGS); do install -m 755 $(O)$$p $(I)/bin/kmtk-$$p; \
	  install -m 644 doc/kmtk-$$p.1 $(I)/share/man/man1/; done
	install -m 755 $(SHLIB) $(I)/lib/
	ln -sf $(notdir $(SHLIB)) $(I)/lib/$(SONAME)
	ln -sf $(SONAME) $(I)/lib/libkmtk.so
	install -m 644 common/kmtk.h $(I)/include/
	sed $(PC_SED) kmtk.pc.in >$(I)/lib/pkgconfig/kmtk.pc
	install -m 644 $(DOCS) $(I)/share/doc/kmtk/

uninstall:
	for p in $(PROGS); do rm -f $(I)/bin/kmtk-$$p $(I)/share/man/man1/kmtk-$$p.1; done
	rm -f $(I)/lib/$(notdir $(SHLIB)) $(I)/lib/$(SONAME) $(I)/lib/libkmtk.so \
	  $(I)/include/kmtk.h $(I)/lib/pkgconfig/kmtk.pc $(DOCS:doc/%=$(I)/share/doc/kmtk/%)
	-rmdir $(I)/share/doc/kmtk

clean:
	rm -rf build lib $(PROGS) tests/test_* $(TOOL_BIN)

# libFuzzer harnesses (tests/fuzz/README.md): clang only, built apart in $(FUZZ_BUILD) with
# the library under ASan + UBSan + fuzzer coverage; the normal build never needs clang.
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build/fuzz$(if $(findstring KM_FUZZ_STRICT,$(FUZZ_DEFS)),-strict)
FUZZ_SECONDS ?= 40
FUZZ_DEFS    ?=
FUZZ_SAN     ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS   = -O1 -g -std=c11 -D_GNU_SOURCE -fno-trapping-math -fopenmp -Wall -Wextra -Wno-pass-failed \
                $(WERROR) $(FUZZ_SAN) $(FUZZ_DEFS) $(PKG_CFLAGS) -Icommon -Itests
FUZZ_SRC      = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN      = $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ  = $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)

fuzz: $(FUZZ_BIN)

$(FUZZ_LIB_OBJ): $(FUZZ_BUILD)/%.o: %.c $(wildcard common/*.h) Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/libkmtk.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BIN): $(FUZZ_BUILD)/%: tests/fuzz/%.c tests/fuzz/fuzz_util.h $(FUZZ_BUILD)/libkmtk.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_BUILD)/libkmtk.a $(LDLIBS) -lpthread -o $@

# Each harness: its regressions replayed, then FUZZ_SECONDS of fuzzing from its corpus.
fuzz-smoke: fuzz
	tests/fuzz/smoke.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

.PHONY: all check check-asan install uninstall clean fuzz fuzz-smoke
.SECONDARY:

# Past one machine (issue 17): `make mpi` builds train-mpi with Open MPI or MPICH (mpicc; the
# library needs no MPI: its transport, common/dist.h, has serial and simulated backends, and
# only mpi/dist_mpi.c includes mpi.h). `make check-mpi` runs tests/mpi with 1-4 ranks.
MPICC     ?= mpicc
MPI_BIN    = $(O)train-mpi
MPI_OBJ    = $(BUILD)/mpi/dist_mpi.o $(BUILD)/train-mpi.o
T43_MPI    = $(O)bench/rls2/table43-mpi

mpi: $(MPI_BIN) $(T43_MPI)

$(BUILD)/mpi-ok:
	@mkdir -p $(BUILD)
	@printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n' \
	  > $(BUILD)/mpi-ok.c
	@$(MPICC) $(BUILD)/mpi-ok.c -o $(BUILD)/mpi-ok.bin >/dev/null 2>&1 || { \
	  echo "make mpi: no working MPI compiler ($(MPICC) cannot build a program with mpi.h);" \
	       "apt-get install openmpi-bin libopenmpi-dev (or MPICH), or set MPICC" >&2; exit 1; }
	@touch $@

$(BUILD)/mpi/dist_mpi.o: mpi/dist_mpi.c mpi/dist_mpi.h common/dist.h $(BUILD)/mpi-ok Makefile
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) -Icommon -Impi -c $< -o $@

$(BUILD)/train-mpi.o: train-mpi.c mpi/dist_mpi.h $(wildcard common/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) -Icommon -Impi -c $< -o $@

$(MPI_BIN): $(MPI_OBJ) $(BUILD)/libkmtk.a $(BUILD)/mpi-ok
	$(MPICC) $(CFLAGS) $(SAN) $(MPI_OBJ) $(BUILD)/libkmtk.a $(LDLIBS) -o $@

# the Table 4.3 driver with its splits on ranks (bench/rls2/table43.c, KM_TABLE43_MPI)
$(BUILD)/bench/rls2/table43-mpi.o: bench/rls2/table43.c mpi/dist_mpi.h $(wildcard common/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) -DKM_TABLE43_MPI -Icommon -Impi -c $< -o $@

$(T43_MPI): $(BUILD)/mpi/dist_mpi.o $(BUILD)/bench/rls2/table43-mpi.o $(BUILD)/libkmtk.a $(BUILD)/mpi-ok
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $(SAN) $(BUILD)/mpi/dist_mpi.o $(BUILD)/bench/rls2/table43-mpi.o \
	  $(BUILD)/libkmtk.a $(LDLIBS) -o $@

check-mpi: all $(MPI_BIN) $(T43_MPI)
	tests/mpi/run.sh $(OUT)

# tests/mpi with train-mpi, table43-mpi and the tools under ASan + UBSan (build/asan, shared
# with check-asan), R = 3 (MPI_RANKS: uneven blocks, the rank-order reduce-scatter), no
# public data sets (MPI_LARGE=0); Open MPI's own leaks suppressed (tests/mpi/lsan.supp)
check-mpi-asan:
	$(ASAN_MAKE) MPI_RANKS=3 MPI_LARGE=0 check-mpi

clean: clean-mpi
clean-mpi:
	rm -f train-mpi bench/rls2/table43-mpi

.PHONY: mpi check-mpi check-mpi-asan clean-mpi
