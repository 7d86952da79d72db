#!/usr/bin/env python3
"""ci/vmlinux.py on small made-up bzImages: the vmlinux out of each payload
compression, the cache, and the bzImage itself whenever its vmlinux cannot
be booted directly."""

import gzip
import lzma
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vmlinux  # noqa: E402


def note(name, ntype, desc):
    name += b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    return struct.pack("<III", len(name), len(desc), ntype) + pad(name) + pad(desc)


def elf(notes):
    """A 64-bit ELF with one PT_NOTE program header holding NOTES."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x20, 64)          # e_phoff
    struct.pack_into("<HH", header, 0x36, 56, 1)      # e_phentsize, e_phnum
    body = notes + b"kernel text" * 10
    ph = struct.pack("<IIQQQQQQ", 4, 0, 64 + 56, 0, 0, len(notes), len(notes), 4)
    return bytes(header) + ph + body


def bzimage(compressed, version=0x20F, magic=b"HdrS"):
    setup_sects = 2
    image = bytearray((setup_sects + 1) * 512)
    image[0x1F1] = setup_sects
    image[0x202:0x206] = magic
    struct.pack_into("<H", image, 0x206, version)
    struct.pack_into("<II", image, 0x248, 16, len(compressed))
    return bytes(image) + b"\0" * 16 + compressed + b"trailer"


def with_size(data, size):
    return data + struct.pack("<I", size)


PVH = note(b"Xen", vmlinux.XEN_ELFNOTE_PHYS32_ENTRY, b"\0\0\0\1")
KERNEL = elf(note(b"GNU", 3, b"id") + PVH)


class Vmlinux(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.out = os.path.join(self.dir, "cache", "vmlinux-test")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_tool(self, image):
        path = os.path.join(self.dir, "bzImage")
        with open(path, "wb") as f:
            f.write(image)
        # the same time each write: the cache tells bzImages apart by size and time
        os.utime(path, ns=(10**18, 10**18))
        done = subprocess.run([sys.executable, os.path.join(HERE, "vmlinux.py"), path, self.out],
                              capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        return path, done.stdout.strip(), done.stderr

    def extracted(self, image):
        path, printed, err = self.run_tool(image)
        self.assertEqual(printed, self.out, err)
        with open(self.out, "rb") as f:
            self.assertEqual(f.read(), KERNEL)
        return path

    def fallback(self, image, reason):
        path, printed, err = self.run_tool(image)
        self.assertEqual(printed, path)
        self.assertIn(reason, err)
        self.assertFalse(os.path.exists(self.out))

    def test_xz(self):
        self.extracted(bzimage(with_size(lzma.compress(KERNEL, format=lzma.FORMAT_XZ), len(KERNEL))))

    def test_gzip(self):
        self.extracted(bzimage(gzip.compress(KERNEL)))

    @unittest.skipUnless(shutil.which("zstd"), "no zstd program")
    def test_zstd(self):
        packed = subprocess.run(["zstd", "-c"], input=KERNEL, capture_output=True, check=True).stdout
        self.extracted(bzimage(with_size(packed, len(KERNEL))))

    def test_cached_until_the_bzimage_changes(self):
        image = bzimage(gzip.compress(KERNEL))
        self.extracted(image)
        with open(self.out, "wb") as f:
            f.write(b"left as it is")
        self.run_tool(image)
        with open(self.out, "rb") as f:
            self.assertEqual(f.read(), b"left as it is")
        # another kernel in the bzImage's place: made again
        self.extracted(image + b"x")

    def test_no_pvh_note(self):
        self.fallback(bzimage(gzip.compress(elf(note(b"GNU", 3, b"id")))), "no PVH entry note")

    def test_unusable_remembered_until_the_bzimage_changes(self):
        image = bzimage(gzip.compress(elf(note(b"GNU", 3, b"id"))))
        self.fallback(image, "no PVH entry note")
        _, _, err = self.run_tool(image)
        self.assertIn("no PVH entry note (CONFIG_PVH off) (cached)", err)
        self.extracted(bzimage(gzip.compress(KERNEL)))

    def test_corrupt_gzip(self):
        packed = bytearray(gzip.compress(KERNEL))
        packed[len(packed) // 2] ^= 0xFF
        self.fallback(bzimage(bytes(packed)), "booting")

    def test_pvh_note_of_another_owner(self):
        other = elf(note(b"Linux", vmlinux.XEN_ELFNOTE_PHYS32_ENTRY, b"\0\0\0\1"))
        self.fallback(bzimage(gzip.compress(other)), "no PVH entry note")

    def test_size_disagrees(self):
        packed = lzma.compress(KERNEL, format=lzma.FORMAT_XZ)
        self.fallback(bzimage(with_size(packed, len(KERNEL) + 1)), "the payload says")

    def test_unknown_compression(self):
        self.fallback(bzimage(b"\x02\x21\x4c\x18" + KERNEL), "magic 02214c18 not supported")

    def test_not_a_bzimage(self):
        self.fallback(bzimage(gzip.compress(KERNEL), magic=b"NoPe"), "not a bzImage")

    def test_old_boot_protocol(self):
        self.fallback(bzimage(gzip.compress(KERNEL), version=0x207), "has no payload fields")

    def test_payload_not_elf(self):
        self.fallback(bzimage(gzip.compress(b"MZ not an ELF" * 4)), "not a 64-bit little-endian ELF")

    def test_truncated(self):
        image = bzimage(gzip.compress(KERNEL))
        self.fallback(image[:len(image) - 40], "payload outside the image")

    def test_corrupt_payload(self):
        packed = bytearray(lzma.compress(KERNEL, format=lzma.FORMAT_XZ))
        packed[len(packed) // 2] ^= 0xFF
        self.fallback(bzimage(with_size(bytes(packed), len(KERNEL))), "booting")


if __name__ == "__main__":
    unittest.main()
