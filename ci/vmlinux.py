#!/usr/bin/env python3
"""The kernel image a guest boots fastest: the ELF vmlinux inside a bzImage.

    ci/vmlinux.py BZIMAGE VMLINUX

Prints the path of the image ci/vm.sh gives QEMU's -kernel. QEMU boots an
ELF vmlinux that carries the PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY,
CONFIG_PVH) straight into the kernel, without the bzImage's real-mode setup
and decompressor, which under TCG take about 4 s of each boot (docs/
developing.md, "The guest harness"). The vmlinux is decompressed once from the
bzImage's payload (gzip, xz; zstd through the zstd program) into VMLINUX,
and made again when the bzImage changes (VMLINUX.stamp). When that cannot be done (another compression, no PVH note, an
image that is not a bzImage) it prints BZIMAGE, and the reason on stderr; the
stamp remembers that, so the bzImage is not decompressed again for nothing.
"""

import gzip
import lzma
import os
import struct
import subprocess
import sys

XEN_ELFNOTE_PHYS32_ENTRY = 18


class NotUsable(Exception):
    """The bzImage has no vmlinux QEMU can boot directly."""


def payload(image):
    """The compressed kernel in a bzImage (boot protocol 2.08 or later)."""
    if len(image) < 0x250 or image[0x202:0x206] != b"HdrS":
        raise NotUsable("not a bzImage (no HdrS boot header)")
    version = struct.unpack_from("<H", image, 0x206)[0]
    if version < 0x208:
        raise NotUsable(f"boot protocol {version >> 8}.{version & 0xff} has no payload fields")
    setup_sects = image[0x1F1] or 4
    offset, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + offset
    if length == 0 or start + length > len(image):
        raise NotUsable("payload outside the image")
    return image[start:start + length]


def decompress(data):
    if data.startswith(b"\x1f\x8b"):
        return gzip.decompress(data)
    if data.startswith(b"\xfd7zXZ\x00"):
        # the kernel's xz payload carries its size after the stream
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data)
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        try:
            # (without the size the kernel's build appends to the frame)
            done = subprocess.run(["zstd", "-dc"], input=data[:-4], capture_output=True, check=False)
        except OSError as e:
            raise NotUsable(f"zstd payload and no zstd program ({e.strerror})") from None
        if done.returncode != 0:
            raise NotUsable(f"zstd -dc failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout
    raise NotUsable(f"payload compression with magic {data[:4].hex()} not supported")


def has_pvh_note(elf):
    """An ELF64 little-endian image with the Xen PHYS32_ENTRY note."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise NotUsable("the payload is not a 64-bit little-endian ELF")
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == XEN_ELFNOTE_PHYS32_ENTRY:
                return True
            pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def write_atomic(path, data):
    """PATH holds DATA or what it held before (another run may write the
    same file at the same time: each writes its own and renames it)."""
    tmp = f"{path}.{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def vmlinux(bzimage, out):
    st = os.stat(bzimage)
    stamp = f"{os.path.abspath(bzimage)} {st.st_size} {st.st_mtime_ns}\n"
    try:
        with open(out + ".stamp", encoding="utf-8") as f:
            cached = f.read()
    except OSError:
        cached = ""
    if cached == stamp and os.path.exists(out):
        return out
    if cached.startswith(stamp + "unusable: "):
        raise NotUsable(cached[len(stamp + "unusable: "):].strip() + " (cached)")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    try:
        elf = extract(bzimage)
    except NotUsable as e:
        write_atomic(out + ".stamp", f"{stamp}unusable: {e}\n".encode())
        raise
    write_atomic(out, elf)
    write_atomic(out + ".stamp", stamp.encode())
    return out


def extract(bzimage):
    """The ELF vmlinux of BZIMAGE; NotUsable when QEMU cannot boot it."""
    with open(bzimage, "rb") as f:
        data = payload(f.read())
    elf = decompress(data)
    # the payload's last 4 bytes: the size of what it holds (gzip's ISIZE,
    # the size the kernel's build appends to the other formats)
    if struct.unpack("<I", data[-4:])[0] != len(elf) % (1 << 32):
        raise NotUsable(f"decompressed {len(elf)} bytes, the payload says {struct.unpack('<I', data[-4:])[0]}")
    if not has_pvh_note(elf):
        raise NotUsable("the vmlinux has no PVH entry note (CONFIG_PVH off)")
    return elf


def main(argv):
    if len(argv) != 3:
        print("usage: vmlinux.py BZIMAGE VMLINUX", file=sys.stderr)
        return 2
    try:
        print(vmlinux(argv[1], argv[2]))
    except Exception as e:  # pylint: disable=broad-except  # whatever it was, the bzImage boots
        print(f"vmlinux.py: booting {argv[1]} as it is: {e}", file=sys.stderr)
        print(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
