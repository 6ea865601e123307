# A flash chip in RAM for MicroPython's littlefs (os.VfsLfs2), with a power switch.
# MicroPython only (viper, os.VfsLfs2). Block methods are allocation-free (they may run
# with the heap locked, see the littlefs trap in shared/toolchain.md).
#
# Power cut: cut_after(n) makes the n-th block write or erase from now the last one;
# it lands half done (the first half of its bytes, or of the block for an erase), and
# every later write or erase fails with -EIO, returned to littlefs, not raised (an
# exception would unwind through littlefs and leave its file objects half-closed for
# the garbage collector). The bytes stay as the cut left them; remount() turns the
# power back on and mounts the same bytearray again, as a reboot would.
import os

import micropython

EIO = 5
ERASED = 0xFF


@micropython.viper
def _copy_out(dst: ptr8, src: ptr8, src_at: int, n: int):
    for i in range(n):
        dst[i] = src[src_at + i]


@micropython.viper
def _copy_in(dst: ptr8, dst_at: int, src: ptr8, n: int):
    for i in range(n):
        dst[dst_at + i] = src[i]


class RAMDisk:
    """`blocks` erase blocks of `block_bytes` (4 KB, as on an RP2040's flash)."""

    PROG_BYTES = 256              # the rp2 port's littlefs progsize (a flash page)

    def __init__(self, blocks, block_bytes=4096):
        self.blocks = blocks
        self.block_bytes = block_bytes
        self.data = bytearray(b"\xff" * (blocks * block_bytes))
        self._erased = b"\xff" * block_bytes
        self.writes = 0           # block writes and erases that landed, cut one included
        self._left = -1           # writes until the cut; -1: power stays on
        self.mount_point = None

    # --- the block device protocol (extended: with offsets) ---------------------------

    def readblocks(self, block, buf, offset=0):
        _copy_out(buf, self.data, block * self.block_bytes + offset, len(buf))

    def writeblocks(self, block, buf, offset=0):
        if self._left == 0:
            return -EIO
        at = block * self.block_bytes + offset
        self.writes += 1
        self._left -= 1
        if self._left == 0:
            _copy_in(self.data, at, buf, len(buf) // 2)
            return -EIO
        self.data[at:at + len(buf)] = buf
        return 0

    def ioctl(self, op, arg):
        if op == 4:               # block count
            return self.blocks
        if op == 5:               # block size
            return self.block_bytes
        if op == 6:               # erase
            if self._left == 0:
                return -EIO
            at = arg * self.block_bytes
            self.writes += 1
            self._left -= 1
            if self._left == 0:
                _copy_in(self.data, at, self._erased, self.block_bytes // 2)
                return -EIO
            self.data[at:at + self.block_bytes] = self._erased
            return 0
        return 0                  # init, deinit, sync

    # --- power and mounting ------------------------------------------------------------

    def cut_after(self, n):
        """The n-th block write or erase from now (1: the next) is the last."""
        self._left = n

    def mount(self, path, format=False):
        if format:
            os.VfsLfs2.mkfs(self)
        os.mount(os.VfsLfs2(self, progsize=self.PROG_BYTES), path)
        self.mount_point = path

    def umount(self):
        if self.mount_point is not None:
            os.umount(self.mount_point)
            self.mount_point = None

    def remount(self):
        """Reboot: power on, mount the same bytes again at the same path."""
        path = self.mount_point
        self.umount()
        self._left = -1
        self.mount(path)
