# SPDX-License-Identifier: MIT
"""Builds the engine with the package: aiter_probe/libaiter-probe.so, from
the C sources of libaiter-probe (the lists in ../Makefile.am, read here so
that there is one list), against the distribution's libyaml, PCRE2,
jansson, nettle and libunistring (pkg-config), and the shipped rule packs
as package data (aiter_probe/data). The library uses no Python C API: the
package loads it with ctypes, and the wheel is for any Python 3 of the
platform.

The sources are the tree above this folder, or $AITER_PROBE_SRCDIR (make
python-wheel builds from a copy of this folder, the tree being read-only
under distcheck)."""

import os
import re
import shlex
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("AITER_PROBE_SRCDIR") or os.path.join(HERE, ".."))
# The engine without report/ (what people read; the scan writes none) and
# without the commands: what aiter_probe_scan and the manifest accessors need.
SOURCE_LISTS = ("CORE_SRC", "ENGINE_SRC", "KINDS_SRC", "LANG_SRC", "PYTHON_SRC", "CAPI_SRC")
PACK_LISTS = ("dist_rules_DATA", "dist_probes_DATA")
# pkg-config names; libunistring has no .pc file (configure.ac looks alike).
PKG_MODULES = ("yaml-0.1", "libpcre2-8", "jansson >= 2.13", "nettle")
DEBIAN_PACKAGES = "libyaml-dev libpcre2-dev libjansson-dev nettle-dev libunistring-dev pkg-config"
LIBRARY = "libaiter-probe.so"


def fail(message):
    sys.exit("aiter-probe: %s" % message)


def makefile_lists(names):
    """{name: [word, ...]} of Makefile.am's `NAME = ...` / `NAME += ...`."""
    path = os.path.join(SRCDIR, "Makefile.am")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().replace("\\\n", " ")
    except OSError as e:
        fail("%s: %s (the C sources are the tree above python/, or $AITER_PROBE_SRCDIR)"
             % (path, e.strerror))
    lists = {}
    for line in text.splitlines():
        m = re.match(r"([A-Za-z_]+)\s*\+?=(.*)", line)
        if m and m.group(1) in names:
            lists.setdefault(m.group(1), []).extend(m.group(2).split())
    for name in names:
        if name not in lists:
            fail("%s: no %s" % (path, name))
        if any("$" in w for w in lists[name]):
            fail("%s: %s names a variable, which this build does not expand" % (path, name))
    return lists


def package_version():
    """AC_INIT's version and bug address, which the engine prints."""
    with open(os.path.join(SRCDIR, "configure.ac"), encoding="utf-8") as f:
        m = re.search(r"AC_INIT\(\[([^]]*)\],\s*\[([^]]*)\],\s*\[([^]]*)\]", f.read())
    if m is None:
        fail("configure.ac: no AC_INIT([name], [version], [bug address])")
    return m.groups()


def pkg_config(*args):
    try:
        out = subprocess.run(("pkg-config",) + args + PKG_MODULES, check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True).stdout
    except FileNotFoundError:
        fail("pkg-config not found (Debian: %s)" % DEBIAN_PACKAGES)
    except subprocess.CalledProcessError as e:
        fail("pkg-config %s: %s (Debian: %s)" % (
            " ".join(PKG_MODULES), e.stderr.strip(), DEBIAN_PACKAGES))
    return shlex.split(out)


class BuildEngine(build_ext):
    """The engine as a plain shared library beside the package's modules,
    two files compiled at a time, with a config.h of what the sources read
    (configure writes the one of `make`)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = 2

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")[:-1], LIBRARY)

    def get_export_symbols(self, ext):
        return []

    def get_source_files(self):
        # Outside this folder: no sdist of it carries them (`make dist` is
        # the source distribution), and the file list refuses their paths.
        return []

    def build_extension(self, ext):
        name, version, bugs = package_version()
        os.makedirs(self.build_temp, exist_ok=True)
        config = os.path.join(self.build_temp, "config.h")
        # No installed data or helper folder: the package tells the scan
        # where its packs are (the options' datadir), and launches are off.
        text = ("#define _GNU_SOURCE 1\n"
                "#define PACKAGE_NAME \"%s\"\n#define PACKAGE_VERSION \"%s\"\n"
                "#define PACKAGE_BUGREPORT \"%s\"\n"
                "#define AP_PKGDATADIR \"\"\n#define AP_PKGLIBEXECDIR \"\"\n"
                "#define GPU_BUILD_REASON \"built by pip, without a GPU compiler\"\n"
                % (name, version, bugs))
        # Rewritten only when it changes, so that a second build compiles nothing.
        try:
            with open(config, encoding="utf-8") as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            with open(config, "w", encoding="utf-8") as f:
                f.write(text)
        exports = os.path.join(self.build_temp, "exports.ver")
        with open(exports, "w", encoding="utf-8") as f:
            f.write("{ global: aiter_probe_*; local: *; };\n")
        ext.include_dirs = [self.build_temp] + ext.include_dirs
        ext.depends = ext.depends + [config]
        ext.extra_link_args = ext.extra_link_args + [
            "-Wl,--version-script=" + exports, "-Wl,--no-undefined"]
        super().build_extension(ext)


class BuildPacks(build_py):
    """The shipped rule packs as package data: aiter_probe/data/rules/ and
    aiter_probe/data/probes/, where the package's scan looks."""

    def run(self):
        super().run()
        for words in makefile_lists(PACK_LISTS).values():
            for rel in words:
                out = os.path.join(self.build_lib, "aiter_probe", "data", rel)
                self.mkpath(os.path.dirname(out))
                self.copy_file(os.path.join(SRCDIR, rel), out)


class PlatformWheel(bdist_wheel):
    """Any Python 3 (no C API), this platform only."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return ("py3", "none") + super().get_tag()[2:]


def engine():
    lists = makefile_lists(SOURCE_LISTS + ("CORE_HDR", "ENGINE_HDR", "KINDS_HDR", "LANG_HDR",
                                           "PYTHON_HDR"))
    files = [os.path.join(SRCDIR, w) for name in lists for w in lists[name]]
    return Extension(
        "aiter_probe.libaiter_probe",
        # absolute: objects go under build_temp by the source's path, which
        # a relative ../src would leave
        sources=[f for f in files if f.endswith(".c")],
        depends=[f for f in files if f.endswith(".h")] + [os.path.join(SRCDIR, "include",
                                                                       "aiter-probe.h")],
        include_dirs=[os.path.join(SRCDIR, "include"), os.path.join(SRCDIR, "src")],
        extra_compile_args=["-std=gnu11"] + pkg_config("--cflags"),
        extra_link_args=pkg_config("--libs") + ["-lunistring"],
    )


setup(ext_modules=[engine()],
      cmdclass={"build_ext": BuildEngine, "build_py": BuildPacks, "bdist_wheel": PlatformWheel})
