#!/usr/bin/python3
"""A disk that loses everything not synced when the power is cut, and fails on demand.

A FUSE passthrough (Debian's python3-fusepy, libfuse 2) over a working folder. Every operation
goes to the working folder at once, as to a page cache; beside it, a "durable" folder keeps what
a real disk would still hold after a power cut, updated only by syncs:

- a file's data becomes durable when the file is fsynced or fdatasynced (only the ranges written
  since its last sync, and its size — a sync that failed does not make them durable later:
  the kernel marks failed pages clean, as PostgreSQL learned);
- a directory's entries (a create, rename, unlink, mkdir, rmdir in it) become durable when the
  directory is fsynced; and, as ext4's fsync does for a new inode, fsyncing a file whose name
  was never durable makes that name (and any new parent folder up to a durable one) durable too;
- nothing else is: not a write without a sync, not a rename before its folder's sync. A file
  whose name is durable but whose data never was comes back empty.

Cutting the power is `kill -9` of this process (and of everything using the disk), a lazy unmount,
then `power_cut_fs.py restore WORK DURABLE`, which rebuilds the working folder from the durable
state alone. Mounting snapshots the working folder as fully durable.

Faults, on demand: commands on standard input, one a line, each answered `ok <command>`:
`eio-write on|off` (every write fails with EIO), `eio-fsync on|off` (every fsync fails with EIO
and drops the data it was to sync), `erofs on|off` (every change fails with EROFS, reads work; through descriptors already open
for writing too, as ext4 with errors=remount-ro — the kernel's read-only flag, which statvfs
reports, is the mount's: PowerCutDisk sets it with a bind remount).

Usage: power_cut_fs.py mount WORK DURABLE MOUNTPOINT   (foreground; prints `mounted` when ready)
       power_cut_fs.py restore WORK DURABLE
POSIX locks and flock stay the kernel's (no lock operation), shared mmap works (no direct_io),
so SQLite in WAL mode runs on it.
"""
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import threading

TREE = "tree.json"
BLOBS = "blobs"
ROOT = "root"


class DurableState:
    """What survives a power cut: folder entries by folder id, file bytes by file id, modes by id."""

    def __init__(self, folder):
        self.folder = folder
        self.dirs = {ROOT: {}}
        self.modes = {}

    def blob(self, ident):
        return os.path.join(self.folder, BLOBS, ident)

    def save(self):
        temporary = os.path.join(self.folder, TREE + ".new")
        with open(temporary, "w") as handle:
            json.dump({"dirs": self.dirs, "modes": self.modes}, handle)
        os.replace(temporary, os.path.join(self.folder, TREE))

    def load(self):
        with open(os.path.join(self.folder, TREE)) as handle:
            saved = json.load(handle)
        self.dirs, self.modes = saved["dirs"], saved["modes"]

    def linked(self):
        found = {ROOT}
        for entries in self.dirs.values():
            found.update(entry[1] for entry in entries.values())
        return found


def kind_of(mode):
    if stat.S_ISDIR(mode):
        return "d"
    if stat.S_ISLNK(mode):
        return "l"
    return "f"


class PowerCutDisk:
    def __init__(self, work, durable):
        self.work = os.path.realpath(work)
        self.state = DurableState(durable)
        self.lock = threading.Lock()
        self.ids = {}            # inode → file id (a new id when an inode number is reused)
        self.counter = 0
        self.handles = {}        # open descriptor → file id
        self.dirty = {}          # file id → [(offset, length)] written since its last sync
        self.shrunk = {}         # file id → the smallest size it was truncated to since its last sync
        self.faults = set()
        self.snapshot()

    # The durable state at mount: everything in the working folder.

    def snapshot(self):
        shutil.rmtree(self.state.folder, ignore_errors=True)
        os.makedirs(os.path.join(self.state.folder, BLOBS))
        self.ids[os.lstat(self.work).st_ino] = ROOT
        self.state.modes[ROOT] = stat.S_IMODE(os.lstat(self.work).st_mode)
        for folder, names, files in os.walk(self.work):
            entries = self.state.dirs.setdefault(self.ident(os.lstat(folder)), {})
            for name in names + files:
                path = os.path.join(folder, name)
                info = os.lstat(path)
                ident = self.ident(info)
                entries[name] = self.entry(path, info, ident)
                if stat.S_ISREG(info.st_mode):
                    shutil.copyfile(path, self.state.blob(ident))
                elif stat.S_ISDIR(info.st_mode):
                    self.state.dirs.setdefault(ident, {})
        self.state.save()

    def ident(self, info):
        ident = self.ids.get(info.st_ino)
        if ident is None:
            self.counter += 1
            ident = self.ids[info.st_ino] = "%d-%d" % (info.st_ino, self.counter)
        return ident

    def entry(self, path, info, ident):
        self.state.modes[ident] = stat.S_IMODE(info.st_mode)
        target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else None
        return [kind_of(info.st_mode), ident, target]

    def forget_if_last_link(self, path):
        """Before `path` goes away: a later file with the same inode number is another file."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode) or info.st_nlink <= 1:
            self.ids.pop(info.st_ino, None)

    def full(self, path):
        return os.path.join(self.work, path.lstrip("/"))

    # Syncs.

    def sync_data(self, descriptor, ident):
        blob = self.state.blob(ident)
        size = os.fstat(descriptor).st_size
        with open(blob, "r+b" if os.path.exists(blob) else "w+b") as out:
            if ident in self.shrunk:
                out.truncate(self.shrunk.pop(ident))
            for offset, length in self.dirty.pop(ident, []):
                out.seek(offset)
                out.write(os.pread(descriptor, length, offset))
            out.truncate(size)

    def sync_names(self, path):
        """ext4 on a new inode's fsync: its name, and its new parent folders', become durable."""
        changed = False
        linked = self.state.linked()
        while path not in ("", "/"):
            info = os.lstat(self.full(path))
            ident = self.ident(info)
            if ident in linked:
                break
            parent = os.path.dirname(path.rstrip("/")) or "/"
            parent_id = self.ident(os.lstat(self.full(parent)))
            self.state.dirs.setdefault(parent_id, {})[os.path.basename(path.rstrip("/"))] = self.entry(self.full(path), info, ident)
            if stat.S_ISDIR(info.st_mode):
                self.state.dirs.setdefault(ident, {})
            changed = True
            path = parent
        return changed

    def sync_folder(self, path):
        folder = self.full(path)
        entries = {}
        for name in os.listdir(folder):
            child = os.path.join(folder, name)
            info = os.lstat(child)
            ident = self.ident(info)
            entries[name] = self.entry(child, info, ident)
            if stat.S_ISDIR(info.st_mode):
                self.state.dirs.setdefault(ident, {})
        self.state.dirs[self.ident(os.lstat(folder))] = entries

    # Restoring after a cut.

    @staticmethod
    def restore(work, durable):
        state = DurableState(durable)
        state.load()
        shutil.rmtree(work)
        os.mkdir(work)
        made = {}

        def build(folder, ident):
            for name, (kind, child, target) in state.dirs.get(ident, {}).items():
                path = os.path.join(folder, name)
                if kind == "d":
                    os.mkdir(path)
                    build(path, child)
                elif kind == "l":
                    os.symlink(target, path)
                    continue
                elif child in made:
                    os.link(made[child], path)
                else:
                    blob = state.blob(child)
                    if os.path.exists(blob):
                        shutil.copyfile(blob, path)
                    else:
                        open(path, "wb").close()
                    made[child] = path
                os.chmod(path, state.modes.get(child, 0o600))

        build(work, ROOT)
        os.chmod(work, state.modes.get(ROOT, 0o700))


def main():
    if sys.argv[1] == "restore":
        PowerCutDisk.restore(sys.argv[2], sys.argv[3])
        return
    from fusepy import FUSE, FuseOSError, Operations

    disk = PowerCutDisk(sys.argv[2], sys.argv[3])

    def fail(error):
        raise FuseOSError(error)

    def changing():
        if "erofs" in disk.faults:
            fail(errno.EROFS)

    class Passthrough(Operations):
        use_ns = True

        def init(self, path):
            print("mounted", flush=True)

        def access(self, path, mode):
            if mode & os.W_OK:
                changing()
            if not os.access(disk.full(path), mode):
                fail(errno.EACCES)

        def getattr(self, path, fh=None):
            info = os.fstat(fh) if fh is not None else os.lstat(disk.full(path))
            keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime_ns", "st_mtime_ns", "st_ctime_ns", "st_blocks")
            found = {key: getattr(info, key) for key in keys}
            for key in ("st_atime", "st_mtime", "st_ctime"):
                found[key] = found.pop(key + "_ns")
            return found

        def readdir(self, path, fh):
            return [".", ".."] + os.listdir(disk.full(path))

        def readlink(self, path):
            return os.readlink(disk.full(path))

        def statfs(self, path):
            info = os.statvfs(disk.full(path))
            keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
            return {key: getattr(info, key) for key in keys}

        def chmod(self, path, mode):
            changing()
            os.chmod(disk.full(path), mode)

        def chown(self, path, uid, gid):
            changing()
            os.chown(disk.full(path), uid, gid)

        def utimens(self, path, times=None):
            changing()
            os.utime(disk.full(path), ns=times)

        def mkdir(self, path, mode):
            changing()
            os.mkdir(disk.full(path), mode)

        def rmdir(self, path):
            changing()
            with disk.lock:
                disk.forget_if_last_link(disk.full(path))
                os.rmdir(disk.full(path))

        def unlink(self, path):
            changing()
            with disk.lock:
                disk.forget_if_last_link(disk.full(path))
                os.unlink(disk.full(path))

        def symlink(self, target, source):
            changing()
            os.symlink(source, disk.full(target))

        def link(self, target, source):
            changing()
            os.link(disk.full(source), disk.full(target))

        def rename(self, old, new):
            changing()
            with disk.lock:
                disk.forget_if_last_link(disk.full(new))
                os.rename(disk.full(old), disk.full(new))

        def mknod(self, path, mode, dev):
            changing()
            os.mknod(disk.full(path), mode, dev)

        def opened(self, descriptor):
            with disk.lock:
                disk.handles[descriptor] = disk.ident(os.fstat(descriptor))
            return descriptor

        def open(self, path, flags):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC):
                changing()
            # The kernel gives every write its offset; O_APPEND would make pwrite ignore it.
            return self.opened(os.open(disk.full(path), flags & ~os.O_APPEND))

        def create(self, path, mode, fi=None):
            changing()
            return self.opened(os.open(disk.full(path), os.O_RDWR | os.O_CREAT, mode))

        def read(self, path, size, offset, fh):
            return os.pread(fh, size, offset)

        def write(self, path, data, offset, fh):
            changing()
            if "eio-write" in disk.faults:
                fail(errno.EIO)
            written = os.pwrite(fh, data, offset)
            with disk.lock:
                disk.dirty.setdefault(disk.handles[fh], []).append((offset, written))
            return written

        def truncate(self, path, length, fh=None):
            changing()
            if fh is not None:
                os.ftruncate(fh, length)
                ident = disk.handles[fh]
            else:
                os.truncate(disk.full(path), length)
                ident = disk.ident(os.lstat(disk.full(path)))
            with disk.lock:
                disk.shrunk[ident] = min(length, disk.shrunk.get(ident, length))

        def flush(self, path, fh):
            return 0

        def release(self, path, fh):
            with disk.lock:
                disk.handles.pop(fh, None)
            os.close(fh)

        def fsync(self, path, datasync, fh):
            with disk.lock:
                ident = disk.handles[fh]
                if "eio-fsync" in disk.faults:
                    disk.dirty.pop(ident, None)
                    disk.shrunk.pop(ident, None)
                    fail(errno.EIO)
                disk.sync_data(fh, ident)
                if path and disk.sync_names(path):
                    disk.state.save()
            return 0

        def fsyncdir(self, path, datasync, fh):
            with disk.lock:
                if "eio-fsync" in disk.faults:
                    fail(errno.EIO)
                disk.sync_folder(path)
                disk.sync_names(path)
                disk.state.save()
            return 0

    def control():
        for line in sys.stdin:
            command = line.split()
            if len(command) == 2 and command[0] in ("eio-write", "eio-fsync", "erofs") and command[1] in ("on", "off"):
                (disk.faults.add if command[1] == "on" else disk.faults.discard)(command[0])
                print("ok", " ".join(command), flush=True)
            elif command:
                print("unknown command:", " ".join(command), flush=True)
        # The test runner closed its end (it ended, or crashed): no disk outlives it.
        subprocess.run(["fusermount", "-u", "-z", sys.argv[4]], stderr=subprocess.DEVNULL)
        os._exit(0)

    threading.Thread(target=control, daemon=True).start()
    FUSE(Passthrough(), sys.argv[4], foreground=True, big_writes=True, hard_remove=True, fsname="power-cut-disk")


if __name__ == "__main__":
    main()
