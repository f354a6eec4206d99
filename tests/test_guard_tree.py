"""The guard looks at its own processes only: what it opens while it guards a command,
under both guards, recorded by a shim preloaded into it (``LD_PRELOAD``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import components
from bugbout.core.plumbing.confinement.limits import Guard
from test_guard import SMALL, program  # noqa: F401 (the fixture: both guards)

SHIM = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void note(const char *path) {
    const char *log = getenv("GUARD_OPENS");
    if (log == NULL || path == NULL)
        return;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "%d %s\n", (int)getpid(), path);
    if (n > 0)
        (void)!write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    close(fd);
}

#define MODE(flags) \
    mode_t mode = 0; \
    if ((flags) & (O_CREAT | O_TMPFILE)) { \
        va_list args; va_start(args, flags); mode = va_arg(args, mode_t); va_end(args); \
    }

int open(const char *path, int flags, ...) {
    MODE(flags) note(path);
    return ((int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open"))(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    MODE(flags) note(path);
    return ((int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64"))(path, flags, mode);
}
int openat(int at, const char *path, int flags, ...) {
    MODE(flags) note(path);
    int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, "openat");
    return real(at, path, flags, mode);
}
int openat64(int at, const char *path, int flags, ...) {
    MODE(flags) note(path);
    int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, "openat64");
    return real(at, path, flags, mode);
}
FILE *fopen(const char *path, const char *how) {
    note(path);
    return ((FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen"))(path, how);
}
FILE *fopen64(const char *path, const char *how) {
    note(path);
    return ((FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen64"))(path, how);
}
DIR *opendir(const char *path) {
    note(path);
    return ((DIR *(*)(const char *))dlsym(RTLD_NEXT, "opendir"))(path);
}
"""
"""A library that writes every path its process opens (``open``, ``fopen``, ``opendir``)
to the file ``GUARD_OPENS`` names, after its pid."""


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shim, compiled."""
    compiler = (os.environ.get("CC") or "cc").split()
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc, or CC) to build the shim")
    folder = tmp_path_factory.mktemp("shim")
    (folder / "shim.c").write_text(SHIM)
    library = folder / "shim.so"
    subprocess.run(
        [*compiler, "-shared", "-fPIC", "-o", str(library), str(folder / "shim.c"), "-ldl"],
        check=True,
    )
    return library


@pytest.mark.skipif(sys.platform != "linux", reason="the guard reads /proc on Linux only")
def test_the_guard_reads_no_process_outside_its_tree(
    tmp_path: Path,
    program: Path | None,  # noqa: F811
    shim: Path,
) -> None:
    """While it guards a command that starts a child, the guard reads the /proc entries
    of its own tree, and none of a process outside it (this test's, its parent's): its
    cost does not grow with the machine's other processes."""
    opens = tmp_path / "opens.log"
    work = tmp_path / "work"
    work.mkdir()
    guard = Guard(SMALL, (work,), tmp_path / "limits.json", program)
    code = "import subprocess; subprocess.run(['sleep', '0.7'])"
    started = subprocess.Popen(
        guard.wrap([sys.executable, "-c", code]),
        cwd=work,
        env={**os.environ, "LD_PRELOAD": str(shim), "GUARD_OPENS": str(opens)},
        start_new_session=True,
    )
    assert started.wait(timeout=60) == 0
    read = [
        path
        for pid, _, path in (line.partition(" ") for line in opens.read_text().splitlines())
        if int(pid) == started.pid and path.startswith("/proc/")
    ]
    own = f"/proc/{started.pid}/"
    assert any(path.startswith(own) for path in read), read  # it did look at its tree
    outside = (os.getpid(), os.getppid())
    assert not [p for p in read if any(p.startswith(f"/proc/{pid}/") for pid in outside)]
