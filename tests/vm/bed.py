#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""farswap test bed: boot a scenario's guests under QEMU and judge the run.

    tests/vm/bed.py run SCENARIO [--kernel 6.12|6.1|7.3|debug] [--timeout S] [--keep]

SCENARIO is a name under tests/vm/scenarios/ or a path to such a directory:
scenario.conf plus one bash script per role (see tests/vm/README.md).  The
first role is the hub: it gets one point-to-point link (QEMU UDP socket
netdev, virtio-net, Soft-RoCE on top) to every other role.  Every guest runs
Debian's kernel under TCG with the machine's root as a read-only 9p lower
layer, so the checkout, the freshly built module and Debian's tools are all
there at their usual paths.

The last line printed is "PASS: vm/<scenario>" or "FAIL: vm/<scenario>:
<reason>"; the exit code is 0 or 1.  Console logs and the shared directory
are kept in build/vm-logs/<scenario>/ whatever happens.

Python standard library only: this runs on a bare Debian with python3.
"""

import argparse
import base64
import ctypes
import fcntl
import hashlib
import lzma
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
VMDIR = SRC / "tests" / "vm"
# Everything the bed writes (initramfs cache, run dirs, logs) lives here.
# FARSWAP_BUILD_DIR moves it (scripts/build-module.sh honours it too); it
# must not be under /tmp, which the guests cover with their own tmpfs.
BUILD = Path(os.environ.get("FARSWAP_BUILD_DIR") or SRC / "build").resolve()
# The guests' CPU model: FARSWAP_QEMU_CPU overrides it.  "max" without
# CMPXCHG16B: QEMU 7.2's TCG now and then leaves EFLAGS holding the low
# half of RDI after the slab allocator's per-CPU cmpxchg16b (every such
# trap seen was at the start of SLUB's fast path, RDI its freelist
# pointer, reserved EFLAGS bits set).  Without the instruction SLUB takes
# its locked path, and the guests run as fast (vm/swap-2donor: 310 s of
# guest time against 330 s).
QEMU_CPU = os.environ.get("FARSWAP_QEMU_CPU") or "max,-cx16"

# Modules the initramfs loads (with their dependencies, in order): 9p and
# overlay to reach the machine's root, virtio_net and Soft-RoCE (rdma_ucm
# for librdmacm's /dev/infiniband/rdma_cm) for the links.  Loading these
# from the initramfs, decompressed, saves the guest's kmod a second of xz
# under TCG.  Anything else is modprobed from the machine's /lib/modules.
INITRAMFS_MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay",
                     "virtio_net", "rdma_rxe", "rdma_ucm"]
# Bump when the initramfs layout changes, so cached images are rebuilt.
INITRAMFS_FORMAT = 3

# Memory debugging on every guest of a Debian kernel, each option with the
# CONFIG_ symbol the kernel needs for it (memdebug_cmdline):
#  - slub_debug=FZP: consistency checks (F), red zones (Z) and poisoning
#    of free objects (P) in every slab cache; a corruption is reported
#    "BUG <cache> (...): Poison overwritten" and friends (bad-patterns.txt).
#    Not U (who allocated and freed each object: a stack trace on every
#    allocation and free): with it vm/swap-1donor's workload missed its
#    720 s deadline here (tests/vm/README.md, "Memory debugging").
#    FARSWAP_VM_MEMDEBUG=full adds it; the debug kernel's KASAN reports
#    carry those stacks anyway.
#  - page_poison=1: free pages filled with 0xaa and checked when handed out
#    again ("pagealloc: memory corruption"): kmalloc() over 8 KiB
#    (struct farswap_donor) and whole pages bypass the slab caches.  It
#    takes precedence over init_on_alloc and init_on_free (mm/mm_init.c
#    says "mem auto-init: CONFIG_PAGE_POISONING is on, will take precedence
#    over init_on_alloc and init_on_free"), so init_on_free=1 would be a
#    no-op here and is not passed: freed memory is poisoned (slab 0x6b,
#    pages 0xaa), not zeroed, so a use after free reads garbage rather than
#    zeros and a write after free is caught.
#  - kfence.sample_interval=10: KFENCE (6.12 only; Debian's 6.1 lacks it)
#    puts one allocation every 10 ms on a guarded page and reports the
#    first out-of-bounds or freed access to it ("BUG: KFENCE: ...").
MEMDEBUG = [
    ("CONFIG_SLUB_DEBUG", "slub_debug=FZP"),
    ("CONFIG_PAGE_POISONING", "page_poison=1"),
    ("CONFIG_KFENCE", "kfence.sample_interval=10"),
]
# --kernel debug: scripts/debug-kernel.sh's kernel (KASAN, lockdep, debug
# objects).  KASAN checks every slab and page access itself, so it gets
# none of MEMDEBUG; but by default it reports only the first bug of a
# boot, and a run can hold two.  Under TCG, KASAN and lockdep make the
# kernel's own init take minutes: the soft-lockup watchdog and RCU's
# stall warnings fired on every boot (seen: "soft lockup - CPU#0 stuck
# for 85s! [swapper/0:1]" in lockdep_init_map_type), so they are off or
# far out there; hung tasks are still reported.
MEMDEBUG_KASAN = ("kasan_multi_shot nosoftlockup "
                  "rcupdate.rcu_cpu_stall_suppress_at_boot=1 "
                  "rcupdate.rcu_cpu_stall_timeout=300")
DEBUG_SERIES = "debug"
# KASAN, lockdep and debug objects under TCG: a scenario's TIMEOUT is
# multiplied by this on the debug kernel (--timeout is taken as given).
DEBUG_TIMEOUT_FACTOR = 3

ROLE_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# A kernel log line as printed on the console (printk.time=1) or by dmesg.
# Role scripts' own output carries no such stamp and is not judged.
KMSG_RE = re.compile(r"\[\s*\d+\.\d+\]\s?(.*)")
# What to do after the first guest fails: the others usually notice at once
# (bed_wait fails fast); give them this long before killing them.
FAIL_GRACE = 20
# Lines of each farswapd log printed when a run fails.
FARSWAPD_TAIL = 25
UDP_RMEM = 8388608

logfile = None


def log(msg):
    line = f"bed: {msg}"
    print(line, flush=True)
    if logfile:
        logfile.write(line + "\n")
        logfile.flush()


class Fail(Exception):
    """The scenario failed before or around the guests; str() is the reason."""


def version_key(s):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]


class Kernel:
    """A guest kernel: Debian's, installed (from /boot, modules in
    /lib/modules) or unpacked (Linux 7.x from trixie-backports, in
    scripts/trixie-chroot.sh's cache), or the bed's debug kernel
    (scripts/debug-kernel.sh, everything the bed needs built in)."""

    def __init__(self, kver, image, config, kdir=None, modules=None):
        self.kver = kver
        self.image = image
        self.config = config        # its .config, for the memory debugging
        self.kdir = kdir            # debug kernel: its build tree
        # Its /lib/modules/<kver> when that is not the machine's (debug
        # and unpacked kernels): modprobe here reads it with -d, and
        # guest-init.sh links the guest's /lib/modules/<kver> to it.
        self.modules = modules

    @property
    def debug(self):
        return self.kdir is not None


def find_kernel(series):
    """Newest Debian kernel of a series ("6.12") that has its modules, or
    the debug kernel ("debug")."""
    if series == DEBUG_SERIES:
        return debug_kernel()
    unpacked = unpacked_kernel(series)
    if unpacked:
        return unpacked
    cands = []
    for img in Path("/boot").glob(f"vmlinuz-{series}.*-amd64"):
        kver = img.name[len("vmlinuz-"):]
        if (Path("/lib/modules") / kver / "modules.dep").exists():
            cands.append((version_key(kver), kver, img))
    if not cands:
        raise Fail(f"no kernel {series} installed (/boot/vmlinuz-{series}.*-amd64 "
                   f"with /lib/modules) nor unpacked for guests (7.x: "
                   f"scripts/trixie-chroot.sh); run 'make setup'")
    _, kver, img = max(cands)
    if not os.access(img, os.R_OK):
        raise Fail(f"{img} is not readable")
    return Kernel(kver, img, Path("/boot") / f"config-{kver}")


def unpacked_kernel(series):
    """The newest kernel of a series that scripts/trixie-chroot.sh unpacked
    for guests (its 'ok' stamp written last), or None."""
    root = Path(os.environ.get("FARSWAP_KERNELS", "/var/cache/farswap/kernels"))
    cands = [(version_key(d.name), d) for d in root.glob(f"{series}.*-amd64")
             if (d / "ok").exists()]
    if not cands:
        return None
    d = max(cands)[1]
    kver = d.name
    modules = d / "lib" / "modules" / kver
    return Kernel(kver, d / "boot" / f"vmlinuz-{kver}", modules / "config",
                  modules=modules)


def distro_root(kernel):
    """The root filesystem of the Debian release that ships a kernel, for
    a role that must run that release's own userland (DKMS builds with
    the kernel's headers, whose kbuild needs that release's toolchain):
    the trixie chroot for an unpacked 7.x kernel, made fit for a guest by
    scripts/trixie-chroot.sh --guest-root; None for the machine's own
    kernels and the debug kernel (the machine's root is theirs)."""
    if kernel.debug or kernel.modules is None:
        return None
    p = subprocess.run([str(SRC / "scripts" / "trixie-chroot.sh"), "--guest-root"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise Fail(f"no Debian 13 root for {kernel.kver}'s guests: "
                   f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return Path(p.stdout.strip())


def guest_binds(paths):
    """The machine's directories a guest on another root sees at their own
    paths (the checkout, the build directory, the scenario, the kernel's
    modules): no path inside another, none with a comma (the kernel
    command line lists them)."""
    out = []
    # Absolute, symlinks kept: the guest sees each at the path it is named by.
    for p in sorted({Path(os.path.abspath(p)) for p in paths if p}):
        if "," in str(p) or re.search(r"\s", str(p)):
            raise Fail(f"{p}: a path a guest binds must have no comma or space")
        if not any(p == o or o in p.parents for o in out):
            out.append(p)
    return out


def debug_kernel():
    """The debug kernel, built (or found in its cache) by
    scripts/debug-kernel.sh: a cold build takes tens of minutes."""
    script = SRC / "scripts" / "debug-kernel.sh"
    p = subprocess.run([str(script), "--check"], capture_output=True, text=True)
    if p.returncode != 0:
        log("building the debug kernel (scripts/debug-kernel.sh; tens of minutes when cold)")
        p = subprocess.run([str(script)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            for l in p.stderr.strip().splitlines()[-5:]:
                log(f"  debug kernel: {l}")
            raise Fail("the debug kernel could not be built (scripts/debug-kernel.sh)")
    d = Path(p.stdout.strip().splitlines()[-1])
    kver = (d / "kver").read_text().strip()
    return Kernel(kver, d / "bzImage", d / "build" / ".config", kdir=d / "build",
                  modules=d / "modules" / "lib" / "modules" / kver)


def kernel_config(kernel):
    """The CONFIG_ symbols that are y in the kernel's configuration."""
    try:
        text = kernel.config.read_text()
    except OSError as e:
        raise Fail(f"cannot read the configuration of {kernel.kver} ({e}): "
                   f"the memory debugging options depend on it")
    return {l.split("=", 1)[0] for l in text.splitlines() if l.endswith("=y")}


def memdebug_cmdline(kernel):
    """The memory debugging every guest boots with, as far as the kernel
    has it (each option checked against its .config: an option the kernel
    lacks would be dropped without a word, and the run would look covered
    when it is not).  FARSWAP_VM_MEMDEBUG=0 turns it off (to measure what
    it costs), =full adds SLUB's user tracking (slub_debug=FZPU); the
    debug kernel gets MEMDEBUG_KASAN instead."""
    level = os.environ.get("FARSWAP_VM_MEMDEBUG", "1")
    if level not in ("0", "1", "full"):
        raise Fail(f"FARSWAP_VM_MEMDEBUG={level}: 0, 1 (the default) or full")
    if level == "0":
        return ""
    have = kernel_config(kernel)
    if kernel.debug:
        if "CONFIG_KASAN" not in have:
            raise Fail(f"the debug kernel {kernel.kver} has no KASAN")
        return MEMDEBUG_KASAN
    opts = []
    for symbol, opt in MEMDEBUG:
        if symbol in have:
            if level == "full" and opt.startswith("slub_debug="):
                opt += "U"
            opts.append(opt)
    if "CONFIG_SLUB_DEBUG" not in have or "CONFIG_PAGE_POISONING" not in have:
        raise Fail(f"{kernel.kver} has no CONFIG_SLUB_DEBUG or CONFIG_PAGE_POISONING: "
                   f"the bed cannot see memory corruption on it")
    return " ".join(opts)


def parse_conf(path):
    """KEY=VALUE lines, values in shell quoting; '#' starts a comment."""
    conf = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if not m:
            raise Fail(f"{path}:{n}: not KEY=VALUE: {line}")
        try:
            words = shlex.split(m.group(2), comments=True)
        except ValueError as e:
            raise Fail(f"{path}:{n}: {e}")
        if len(words) > 1:
            raise Fail(f"{path}:{n}: quote values with spaces: {line}")
        conf[m.group(1)] = words[0] if words else ""
    return conf


def conf_int(conf, key, default):
    try:
        return int(conf.get(key, default))
    except ValueError:
        raise Fail(f"scenario.conf: {key} is not a number: {conf[key]}")


# --- the initramfs ----------------------------------------------------------

def modules_for(kernel):
    """Module files to insmod, in load order, for INITRAMFS_MODULES.  The
    debug kernel has them all built in (its initramfs loads nothing):
    checked here, so a fragment that lost one fails before any boot."""
    order = []
    root = ["-d", str(kernel.modules.parents[2])] if kernel.modules else []
    for mod in INITRAMFS_MODULES:
        p = subprocess.run(["modprobe", *root, "-S", kernel.kver, "--show-depends", mod],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise Fail(f"modprobe -S {kernel.kver} --show-depends {mod}: {p.stderr.strip()}")
        for line in p.stdout.splitlines():
            words = line.split()
            if kernel.debug and words[:1] != ["builtin"]:
                raise Fail(f"{mod} is not built into the debug kernel "
                           f"(tests/vm/debug-kernel.config): {line}")
            if words[:1] == ["insmod"] and words[1] not in order:
                order.append(words[1])
    return order


def read_module(path):
    """A module's ELF bytes: busybox insmod cannot decompress."""
    if path.endswith(".xz"):
        return lzma.decompress(Path(path).read_bytes())
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True,
                              capture_output=True).stdout
    if path.endswith(".gz"):
        import gzip
        return gzip.decompress(Path(path).read_bytes())
    return Path(path).read_bytes()


def find_busybox():
    bb = shutil.which("busybox") or "/bin/busybox"
    if not os.path.exists(bb):
        raise Fail("busybox not found; install busybox-static ('make setup')")
    head = Path(bb).read_bytes()[:65536]
    if b"ld-linux" in head:
        raise Fail(f"{bb} is dynamically linked; install busybox-static")
    return Path(bb).resolve()


class Cpio:
    """Just enough of the newc format for an initramfs."""

    def __init__(self):
        self.out = bytearray()
        self.ino = 1

    def add(self, name, mode, data=b"", rdev=(0, 0)):
        fields = (self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(name) + 1, 0)
        self.ino += 1
        self.out += b"070701" + "".join(f"{v:08X}" for v in fields).encode()
        self.out += name.encode() + b"\0"
        self.out += b"\0" * (-len(self.out) % 4)
        self.out += data
        self.out += b"\0" * (-len(self.out) % 4)

    def finish(self):
        self.ino = 0
        self.add("TRAILER!!!", 0)
        return bytes(self.out)


def ensure_initramfs(kernel):
    """build/vm/initramfs-<kver>.cpio, rebuilt when any input changed."""
    kver = kernel.kver
    init = VMDIR / "initramfs-init.sh"
    busybox = find_busybox()
    mods = modules_for(kernel)

    h = hashlib.sha256()
    h.update(f"format {INITRAMFS_FORMAT} kver {kver}\n".encode())
    h.update(init.read_bytes())
    for f in [str(busybox)] + mods:
        st = os.stat(f)
        h.update(f"{f} {st.st_size} {st.st_mtime_ns}\n".encode())
    key = h.hexdigest()

    outdir = BUILD / "vm"
    outdir.mkdir(parents=True, exist_ok=True)
    image = outdir / f"initramfs-{kver}.cpio"
    stamp = outdir / f"initramfs-{kver}.key"
    if image.exists() and stamp.exists() and stamp.read_text().strip() == key:
        return image

    log(f"building initramfs for {kver} ({len(mods)} modules)")
    c = Cpio()
    for d in ("bin", "dev", "modules", "proc", "sys", "lower", "upper", "newroot"):
        c.add(d, 0o040755)
    # The kernel opens /dev/console for init before /init runs: without
    # this node init would have no stdout.
    c.add("dev/console", 0o020600, rdev=(5, 1))
    c.add("bin/busybox", 0o100755, busybox.read_bytes())
    c.add("init", 0o100755, init.read_bytes())
    names = []
    for m in mods:
        name = re.sub(r"\.(xz|zst|gz)$", "", os.path.basename(m))
        names.append(name)
        c.add(f"modules/{name}", 0o100644, read_module(m))
    c.add("modules/order", 0o100644, "".join(n + "\n" for n in names).encode())

    # Atomic replace: a concurrent run of another scenario may be reading.
    tmp = image.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(c.finish())
    os.replace(tmp, image)
    stamp.write_text(key + "\n")
    return image


# --- building what the scenario needs ----------------------------------------

def run_logged(cmd, logpath, what, env=None):
    with open(logpath, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=SRC, env=env)
    text = Path(logpath).read_text()
    if p.returncode != 0:
        tail = [l for l in text.splitlines() if l.strip()][-5:]
        for l in tail:
            log(f"  {what}: {l}")
        raise Fail(f"{what} failed (log: {logpath})")
    return text


def build_module(kernel, logdir):
    if not (SRC / "kmod" / "Kbuild").exists():
        raise Fail("scenario needs farswap.ko but kmod/Kbuild does not exist yet")
    log(f"building farswap.ko for {kernel.kver}")
    cmd = [str(SRC / "scripts" / "build-module.sh"), kernel.kver]
    env = None
    if kernel.debug:
        # Against the debug kernel's tree; with -g, so a KASAN or lockdep
        # report's farswap+0x... decodes to a line (scripts/faddr2line).
        env = dict(os.environ, FARSWAP_KDIR=str(kernel.kdir))
        cmd.append("KCFLAGS=-g")
    out = run_logged(cmd, logdir / "module-build.log", "module build", env)
    return out.strip().splitlines()[-1]


def build_test_module(kernel, sc, name, logdir):
    """A scenario's own test module (TEST_MODULE=NAME: the directory
    NAME/ beside scenario.conf, a Kbuild and its sources), built for the
    guests' kernel in build/<kver>/test-modules/<scenario>/NAME/."""
    if not re.match(r"^[a-z][a-z0-9_]*$", name) or not (sc / name / "Kbuild").exists():
        raise Fail(f"TEST_MODULE={name}: no {sc / name / 'Kbuild'}")
    kdir = kernel.kdir or Path("/lib/modules") / kernel.kver / "build"
    out = BUILD / kernel.kver / "test-modules" / sc.name / name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(sc / name, out)
    log(f"building the test module {name} for {kernel.kver}")
    run_logged(["make", "-C", str(kdir), f"M={out}", "modules"],
               logdir / "test-module-build.log", "test module build")
    ko = out / f"{name}.ko"
    if not ko.exists():
        raise Fail(f"test module build left no {ko}")
    return str(ko)


def build_daemon(logdir):
    if not (SRC / "daemon" / "Makefile").exists():
        raise Fail("scenario needs farswapd but daemon/Makefile does not exist yet")
    log("building the daemon, farswapctl, test tools and workload")
    run_logged(["make", "-C", "daemon"], logdir / "daemon-build.log", "daemon build")
    run_logged(["make", "-C", "tools"], logdir / "farswapctl-build.log", "farswapctl build")
    run_logged(["make", "-C", "tests/workload"], logdir / "workload-build.log",
               "workload build")


def build_debs(logdir):
    """The .debs in build/deb/, where README.md's quick start installs them
    from: built afresh (17 s), so that a guest never installs a stale one."""
    log("building the Debian packages (make deb)")
    run_logged(["make", "deb"], logdir / "deb-build.log", "make deb")


def build_tools(logdir):
    log("building the test tools")
    run_logged(["make", "-C", "tests/tools"], logdir / "tools-build.log", "test tools build")


# --- the machine ---------------------------------------------------------------

def raise_rmem():
    """QEMU's UDP netdev takes the default receive buffer; at the stock
    208 KiB a few percent of frames drop and RC retransmits stall."""
    for key in ("rmem_max", "rmem_default"):
        path = Path("/proc/sys/net/core") / key
        try:
            if int(path.read_text()) < UDP_RMEM:
                path.write_text(f"{UDP_RMEM}\n")
        except (OSError, ValueError) as e:
            log(f"warning: cannot raise net.core.{key} to {UDP_RMEM} ({e}); "
                f"expect UDP drops and RDMA retransmit stalls")


def udp_rcvbuf_errors():
    try:
        lines = [l.split() for l in Path("/proc/net/snmp").read_text().splitlines()
                 if l.startswith("Udp:")]
        return int(lines[1][lines[0].index("RcvbufErrors")])
    except (OSError, ValueError, IndexError):
        return None


def free_udp_ports(n):
    """n distinct free UDP ports on 127.0.0.1.  The sockets are returned
    open and closed just before QEMU binds, to keep the window small."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    return socks, [s.getsockname()[1] for s in socks]


def die_with_parent():
    # QEMU must not outlive bed.py, even if bed.py is SIGKILLed.
    PR_SET_PDEATHSIG = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# --- one run -------------------------------------------------------------------

class Guest:
    def __init__(self, role, mem, smp):
        self.role = role
        self.mem = mem
        self.smp = smp
        self.links = []     # (netdev_args, mac, netdev, rxe, addr/prefix, peer)
        self.env = {}
        self.proc = None
        self.started = None
        self.up_after = None
        self.exited_after = None
        self.killed = False
        self.power_cut = False  # killed on a peer's request (bed_cut_power)
        self.console = None
        self.root = Path("/")   # the 9p root filesystem's lower layer
        self.binds = []         # machine paths shown at their own path


def load_patterns(conf):
    pats = []
    for line in (VMDIR / "bad-patterns.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            pats.append(re.compile(line))
    allow = conf.get("ALLOW_LOG_PATTERNS", "")
    try:
        allow_re = re.compile(allow) if allow else None
    except re.error as e:
        raise Fail(f"ALLOW_LOG_PATTERNS is not a valid regex: {e}")
    return pats, allow_re


def scan_log(path, pats, allow_re, stamped_only):
    """Bad kernel log lines in a console log or dmesg dump."""
    bad = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return bad
    for raw in text.splitlines():
        raw = raw.rstrip("\r")
        m = KMSG_RE.search(raw)
        if stamped_only and not m:
            continue
        line = raw[m.start():] if m else raw
        if any(p.search(line) for p in pats) and not (allow_re and allow_re.search(line)):
            bad.append(line)
    return bad


def run(args):
    """Returns (tag, failure reason or None, log directory or None)."""
    global logfile

    sc = Path(args.scenario)
    if not (sc / "scenario.conf").exists():
        sc = VMDIR / "scenarios" / args.scenario
    sc = sc.resolve()
    name = sc.name
    tag = f"vm/{name}"
    if not (sc / "scenario.conf").exists():
        return tag, f"no scenario {args.scenario} ({sc}/scenario.conf missing)", None
    try:
        conf = parse_conf(sc / "scenario.conf")
    except Fail as e:
        return tag, str(e), None

    # A run on another kernel than the scenario's own is a different test:
    # its name and log directory say which kernel.
    series = args.kernel or conf.get("KERNEL", "6.12")
    if series != conf.get("KERNEL", "6.12"):
        name = f"{name}@{series}"
        tag = f"vm/{name}"

    if re.search(r"\s", str(SRC)) or re.search(r"\s", str(sc)):
        return tag, f"paths must not contain spaces (kernel command line): {SRC}, {sc}", None
    if str(sc).startswith("/tmp/") or str(BUILD).startswith("/tmp/"):
        return tag, "scenario and build directory must not be under /tmp: guests mount their own /tmp", None

    rundir = BUILD / "vm-runs" / name
    logdir = BUILD / "vm-logs" / name
    (BUILD / "vm-runs").mkdir(parents=True, exist_ok=True)
    lock = open(BUILD / "vm-runs" / f"{name}.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return tag, "another run of this scenario is in progress", None

    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    logfile = open(logdir / "bed.log", "w")

    guests = []
    try:
        reason = run_guests(args, sc, conf, series, name, rundir, logdir, guests)
    except Fail as e:
        reason = str(e)
    except KeyboardInterrupt:
        reason = "interrupted"
    finally:
        stop_all(guests)
        # Whatever happened, the logs get what the guests left in /bed.
        if (rundir / "shared").is_dir():
            save_shared(rundir / "shared", logdir)
        if not args.keep:
            shutil.rmtree(rundir, ignore_errors=True)
    return tag, reason, logdir


def run_guests(args, sc, conf, series, name, rundir, logdir, guests):
    t0 = time.monotonic()
    roles = conf.get("ROLES", "").split()
    if not roles:
        raise Fail("scenario.conf: ROLES is empty")
    for r in roles:
        if not ROLE_RE.match(r):
            raise Fail(f"role name {r!r}: use [a-z][a-z0-9_]* (it becomes part of variable names)")
        if not (sc / f"{r}.sh").exists():
            raise Fail(f"role {r} has no script {sc / (r + '.sh')}")
    if len(set(roles)) != len(roles):
        raise Fail("scenario.conf: ROLES names a role twice")
    if len(roles) > 250:
        raise Fail("too many roles")

    kernel = find_kernel(series)
    kver = kernel.kver
    timeout = args.timeout or conf_int(conf, "TIMEOUT", 300)
    if kernel.debug and not args.timeout:
        timeout *= DEBUG_TIMEOUT_FACTOR
    pats, allow_re = load_patterns(conf)
    memdebug = memdebug_cmdline(kernel)
    log(f"scenario {name}: roles {' '.join(roles)}, kernel {kver}, timeout {timeout} s, "
        f"memory debugging: {memdebug or 'off'}")

    # Before booting: everything the guests will run must exist.
    initramfs = ensure_initramfs(kernel)
    ko = str(BUILD / kver / "kmod" / "farswap.ko")
    if conf.get("NEEDS_MODULE") == "1":
        ko = build_module(kernel, logdir)
    test_ko = ""
    if conf.get("TEST_MODULE"):
        test_ko = build_test_module(kernel, sc, conf["TEST_MODULE"], logdir)
    if conf.get("NEEDS_DAEMON") == "1":
        build_daemon(logdir)        # the test tools come along
    elif conf.get("NEEDS_TOOLS") == "1":
        build_tools(logdir)
    if conf.get("NEEDS_DEB") == "1":
        build_debs(logdir)
    t_built = time.monotonic()

    shutil.rmtree(rundir, ignore_errors=True)
    shared = rundir / "shared"
    (shared / ".bed").mkdir(parents=True)
    # The secret donors and hosts share (farswapd key-file, the host's
    # logon key through farswapctl add-key): made afresh for every run,
    # as a deployment makes one, in the key file format
    # (common/keyfile.h): FARSWAP-1:00:, the base64 of 32 random bytes
    # and their CRC-32 (little endian), ':'.
    key = shared / "bed.key"
    secret = os.urandom(32)
    blob = secret + zlib.crc32(secret).to_bytes(4, "little")
    key.write_bytes(b"FARSWAP-1:00:" + base64.b64encode(blob) + b":\n")
    key.chmod(0o600)

    for r in roles:
        guests.append(Guest(r, conf_int(conf, f"MEM_{r}", 512), conf_int(conf, f"SMP_{r}", 1)))
    distro = conf.get("DISTRO_ROOT", "").split()
    for r in distro:
        if r not in roles:
            raise Fail(f"scenario.conf: DISTRO_ROOT names {r}, which is not in ROLES")
    root = distro_root(kernel) if distro else None
    if root:
        binds = guest_binds([SRC, BUILD, sc, kernel.modules,
                             os.environ.get("FARSWAP_DEB_DIR")])
        for g in guests:
            if g.role in distro:
                g.root, g.binds = root, binds
        log(f"{' '.join(distro)} boot(s) {root} (the userland of {kver}), "
            f"with {' '.join(map(str, binds))} from the machine")
    # SYSTEMD_ROLES: these guests boot on to systemd as PID 1
    # (guest-init.sh's boot_systemd) and run the role script as a unit.
    systemd = conf.get("SYSTEMD_ROLES", "").split()
    for r in systemd:
        if r not in roles:
            raise Fail(f"scenario.conf: SYSTEMD_ROLES names {r}, which is not in ROLES")
        if r in distro:
            raise Fail(f"scenario.conf: {r} is in SYSTEMD_ROLES and DISTRO_ROOT: "
                       f"systemd has been tried on the machine's root only")
    if systemd:
        log(f"{' '.join(systemd)} boot(s) systemd as PID 1 (bed.target)")
    hub = guests[0]
    socks, ports = free_udp_ports(2 * (len(guests) - 1))

    # Topology: a star from the hub, one /24 and one UDP "wire" per link.
    for i, leaf in enumerate(guests[1:], 1):
        hub_port, leaf_port = ports[2 * i - 2], ports[2 * i - 1]
        net = f"10.77.{i}"
        hub.links.append((f"udp=127.0.0.1:{leaf_port},localaddr=127.0.0.1:{hub_port}",
                          f"52:54:00:77:{i:02x}:01", f"eth{i - 1}", f"rxe{i - 1}",
                          f"{net}.1/24", leaf.role))
        leaf.links.append((f"udp=127.0.0.1:{hub_port},localaddr=127.0.0.1:{leaf_port}",
                           f"52:54:00:77:{i:02x}:02", "eth0", "rxe0",
                           f"{net}.2/24", hub.role))

    for g in guests:
        env = {k: v for k, v in conf.items() if re.match(r"^[A-Z][A-Z0-9_]*$", k)}
        env.update({
            "FARSWAP_ROLE": g.role,
            "FARSWAP_ROLES": " ".join(roles),
            "FARSWAP_SCENARIO": name,
            "FARSWAP_SRC": str(SRC),
            "FARSWAP_KO": ko,
            "FARSWAP_KVER": kver,
            "BED_TEST_KO": test_ko,
            "BED": "/bed",
            "BED_ROLE": g.role,
            "BED_SCENARIO_DIR": str(sc.resolve()),
            "BED_SCRIPT": str((sc / f"{g.role}.sh").resolve()),
            "BED_TIMEOUT": str(timeout),
            # The scripts' own waits stretch as TIMEOUT does (guest-lib.sh).
            "BED_TIME_SCALE": str(DEBUG_TIMEOUT_FACTOR if kernel.debug else 1),
            "BED_LINKS": " ".join(",".join(l[1:]) for l in g.links),
            "ALLOW_LOG_PATTERNS": conf.get("ALLOW_LOG_PATTERNS", ""),
        })
        if g.role in systemd:
            env["BED_SYSTEMD"] = "1"
        if kernel.modules:
            # guest-init.sh links /lib/modules/<kver> here: modprobe
            # (rdma_cm, the crypto libraries...) then finds the kernel's
            # modules, built in or not.
            env["BED_MODULES_DIR"] = str(kernel.modules)
        for _, _, netdev, rxe, addr, peer in g.links:
            ip = addr.split("/")[0]
            peer_ip = ip[: ip.rfind(".")] + (".2" if ip.endswith(".1") else ".1")
            env.setdefault("FARSWAP_ADDR", ip)
            env.setdefault("FARSWAP_DEV", rxe)
            env[f"FARSWAP_ADDR_{peer}"] = ip
            env[f"FARSWAP_PEER_{peer}"] = peer_ip
            env[f"FARSWAP_DEV_{peer}"] = rxe
            env[f"FARSWAP_NETDEV_{peer}"] = netdev
        g.env = env
        (shared / ".bed" / f"{g.role}.env").write_text(
            "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items())))

    raise_rmem()
    udp0 = udp_rcvbuf_errors()

    cmdline_extra = conf.get("EXTRA_CMDLINE", "")
    for s in socks:
        s.close()
    for g in guests:
        # EXTRA_CMDLINE for every guest, EXTRA_CMDLINE_<role> for one.
        role_extra = conf.get(f"EXTRA_CMDLINE_{g.role}", "")
        # A systemd guest's udev would rename the links the bed named
        # (eth0 to ens4, while up): net.ifnames=0 keeps the kernel's names.
        launch(g, kernel.image, initramfs, shared, logdir,
               f"{memdebug} {cmdline_extra} {role_extra}".strip())
    t_launch = time.monotonic()
    log(f"booting {len(guests)} guest(s); console logs in {logdir}")

    reason = watch(guests, shared, timeout, t_launch)
    t_end = time.monotonic()

    # The verdict: exit codes, then the kernel logs of every guest.
    reasons = [reason] if reason else []
    for g in guests:
        rcf = shared / f"{g.role}.rc"
        if g.killed or g.power_cut:
            continue
        if not rcf.exists():
            fatal = [l for l in read_lines(logdir / f"{g.role}.console") if "farswap-bed: FATAL" in l]
            why = fatal[0].split("FATAL: ", 1)[1] if fatal else "see its console log"
            qerr = [l for l in read_lines(logdir / f"{g.role}.qemu.log") if l.strip()]
            if g.proc.returncode not in (0, None) and qerr:
                why = f"QEMU exited {g.proc.returncode}: {qerr[-1]}"
            reasons.append(f"{g.role}: guest stopped without an exit code ({why})")
            continue
        rc = rcf.read_text().strip()
        if rc == "254":
            err = (shared / f"{g.role}.error")
            reasons.append(f"{g.role}: guest setup failed: "
                           f"{err.read_text().strip() if err.exists() else '?'}")
        elif rc == "124":
            reasons.append(f"{g.role}: role script timed out in the guest after {timeout} s")
        elif rc != "0":
            # The scenario's own words, from bed_fail, when it gave them.
            said = [l.split(": FAILED: ", 1)[1].strip()
                    for l in read_lines(logdir / f"{g.role}.console") if ": FAILED: " in l]
            reasons.append(f"{g.role}: role script exited {rc}"
                           + (f" ({said[0]})" if said else ""))
            # The lines before a guest's own failure (a peer's echo,
            # "waiting for ...", says nothing new).
            if said and not said[0].startswith("waiting for "):
                show_context(g.role, logdir / f"{g.role}.console",
                             ": FAILED: " + said[0], 60, 0)

    for g in guests:
        bad = scan_log(logdir / f"{g.role}.console", pats, allow_re, True)
        bad += scan_log(shared / f"{g.role}.dmesg", pats, allow_re, False)
        if bad:
            more = len(set(bad)) - 1
            reasons.append(f"{g.role}: bad kernel log line: {bad[0].strip()}"
                           + (f" (+{more} more)" if more > 0 else ""))
            for l in sorted(set(bad), key=bad.index)[:10]:
                log(f"  {g.role} kernel log: {l.strip()}")
            # The first report whole (registers, workqueue, call trace):
            # CI keeps only this output, not the console logs.
            show_context(g.role, logdir / f"{g.role}.console", bad[0].strip(), 2, 45)

    if reasons:
        # CI keeps only this output: farswapd's own account of a failed
        # run (sessions, refusals, what it closed and why) goes with it.
        for f in sorted(shared.glob("*-farswapd.log")):
            for l in read_lines(f)[-FARSWAPD_TAIL:]:
                log(f"  {f.name}: {l}")

    udp1 = udp_rcvbuf_errors()
    results = read_lines(shared / "results")
    for g in guests:
        if g.up_after is not None:
            results.append(f"bed_boot_s_{g.role} {g.up_after:.1f}")
    if udp0 is not None and udp1 is not None:
        results.append(f"bed_udp_rcvbuf_errors {udp1 - udp0}")
    results.append(f"bed_build_s {t_built - t0:.1f}")
    results.append(f"bed_guests_s {t_end - t_launch:.1f}")
    for r in results:
        if r.strip():
            print(f"result: {r}", flush=True)
            logfile.write(f"result: {r}\n")

    return "; ".join(reasons) if reasons else None


def show_context(role, path, needle, before, after):
    """Print the console lines around the first one containing NEEDLE."""
    lines = [l.rstrip("\r") for l in read_lines(path)]
    at = next((i for i, l in enumerate(lines) if needle in l), None)
    if at is None:
        return
    for l in lines[max(0, at - before):at + after + 1]:
        log(f"  {role} console: {l}")


def read_lines(path):
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def launch(g, vmlinuz, initramfs, shared, logdir, cmdline_extra):
    cmdline = (f"console=ttyS0 zswap.enabled=0 panic=-1 printk.time=1 "
               f"bed_role={g.role} bed_init={VMDIR / 'guest-init.sh'} {cmdline_extra}")
    if g.binds:
        cmdline += f" bed_binds={','.join(str(b) for b in g.binds)}"
    g.console = logdir / f"{g.role}.console"
    cmd = [
        "qemu-system-x86_64",
        "-name", f"farswap-bed-{g.role}",
        "-machine", "pc", "-accel", "tcg", "-cpu", QEMU_CPU,
        "-smp", str(g.smp), "-m", str(g.mem),
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-kernel", str(vmlinuz), "-initrd", str(initramfs), "-append", cmdline.strip(),
        "-chardev", f"file,id=con,path={g.console}",
        "-serial", "chardev:con",
        "-virtfs", f"local,path={g.root},mount_tag=farswap_root,security_model=none,"
                   "readonly=on,multidevs=remap",
        "-virtfs", f"local,path={shared},mount_tag=farswap_bed,security_model=none,"
                   "multidevs=remap",
    ]
    if g.binds:
        cmd += ["-virtfs", "local,path=/,mount_tag=farswap_machine,security_model=none,"
                           "readonly=on,multidevs=remap"]
    for n, (netdev, mac, *_rest) in enumerate(g.links):
        cmd += ["-netdev", f"socket,id=n{n},{netdev}",
                "-device", f"virtio-net-pci,netdev=n{n},mac={mac}"]
    (logdir / f"{g.role}.qemu.cmd").write_text(shlex.join(cmd) + "\n")
    qlog = open(logdir / f"{g.role}.qemu.log", "w")
    # Own session: a Ctrl-C reaches bed.py only, which then stops QEMU.
    g.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                              stderr=subprocess.STDOUT, start_new_session=True,
                              preexec_fn=die_with_parent)
    qlog.close()
    g.started = time.monotonic()


def watch(guests, shared, timeout, t_launch):
    """Wait for every guest to power off.  Returns a failure reason for
    hangs (the other verdicts come from the files the guests left)."""
    deadline = t_launch + timeout
    failed_at = None
    failed_role = None
    while True:
        now = time.monotonic()
        running = []
        for g in guests:
            cut = shared / f"cut-power.{g.role}"
            if not g.power_cut and g.exited_after is None and cut.exists():
                # Power gone: no FIN, no disconnect, nothing flushed.
                g.power_cut = True
                if g.proc is not None and g.proc.poll() is None:
                    g.proc.kill()
                    g.proc.wait()
                (shared / f"cut-power.{g.role}.done").write_text("")
                log(f"{g.role}: power cut on request")
            if g.up_after is None and (shared / ".bed" / f"{g.role}.up").exists():
                g.up_after = now - g.started
                log(f"{g.role} up after {g.up_after:.1f} s")
            if g.exited_after is None and g.proc.poll() is not None:
                g.exited_after = now - g.started
                rcf = shared / f"{g.role}.rc"
                rc = rcf.read_text().strip() if rcf.exists() else "none"
                log(f"{g.role} powered off after {g.exited_after:.1f} s (role exit code {rc})")
                if rc != "0" and failed_at is None and not g.power_cut:
                    failed_at, failed_role = now, g.role
            if g.exited_after is None:
                running.append(g)
        if not running:
            return None
        if now >= deadline:
            hung = []
            for g in running:
                done = (shared / f"{g.role}.rc").exists()
                hung.append(f"{g.role} ({'finished its role but did not power off' if done else 'still running'})")
                kill(g)
                log(f"{g.role} hung; the end of its console log:")
                for l in read_lines(g.console)[-8:]:
                    log(f"  {g.role}| {l.rstrip()}")
            return f"timed out after {timeout} s: hung: {', '.join(hung)}"
        if failed_at is not None and now >= failed_at + FAIL_GRACE:
            for g in running:
                log(f"killing {g.role}: still running {FAIL_GRACE} s after {failed_role} failed")
                kill(g)
            return None
        time.sleep(0.2)


def kill(g):
    g.killed = True
    stop(g)


def stop(g):
    if g.proc is None or g.proc.poll() is not None:
        return
    g.proc.terminate()
    try:
        g.proc.wait(3)
    except subprocess.TimeoutExpired:
        g.proc.kill()
        g.proc.wait()


def stop_all(guests):
    for g in guests:
        try:
            stop(g)
        except Exception:       # keep stopping the others
            if g.proc is not None:
                g.proc.kill()


def save_shared(shared, logdir):
    """Copy the shared directory into the logs (results, .rc, dmesg...)."""
    dest = logdir / "bed"
    limit = 64 << 20
    for p in sorted(shared.rglob("*")):
        rel = p.relative_to(shared)
        if p.is_dir():
            (dest / rel).mkdir(parents=True, exist_ok=True)
        elif p.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            if p.stat().st_size <= limit:
                shutil.copy2(p, dest / rel)
            else:
                (dest / f"{rel}.skipped").write_text(f"{p.stat().st_size} bytes, not copied\n")


def on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="boot a scenario's guests and judge the run")
    r.add_argument("scenario", help="name under tests/vm/scenarios/ or a directory")
    r.add_argument("--kernel", help="kernel series: 6.12 (default), 6.1, 7.3 (unpacked by "
                   "scripts/trixie-chroot.sh), or 'debug' "
                   "(scripts/debug-kernel.sh: KASAN, lockdep; built when missing)")
    r.add_argument("--timeout", type=int, help="seconds, overrides TIMEOUT in scenario.conf")
    r.add_argument("--keep", action="store_true",
                   help="keep the run directory build/vm-runs/<scenario>/ afterwards")
    args = ap.parse_args()

    # SIGINT too: a shell without job control starts background commands
    # with SIGINT ignored, and Python then never raises KeyboardInterrupt.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    start = time.monotonic()
    tag = f"vm/{Path(args.scenario).name}"
    logdir = None
    try:
        tag, reason, logdir = run(args)
    except KeyboardInterrupt:
        reason = "interrupted"
    except Exception as e:      # a bed bug must still end in a FAIL line
        import traceback
        traceback.print_exc()
        reason = f"bed.py crashed: {e!r}"
    took = time.monotonic() - start
    if reason:
        if logdir:
            log(f"logs: {logdir}")
        log(f"took {took:.1f} s")
        print(f"FAIL: {tag}: {reason}", flush=True)
        return 1
    log(f"took {took:.1f} s")
    print(f"PASS: {tag}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
