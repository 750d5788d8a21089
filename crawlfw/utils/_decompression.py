"""Bounded, incremental decoders for compressed bodies (decompression-bomb safe).

Every decoder here inflates its input a slice at a time and checks the output size
after each step, so memory stays within about ``max_size`` plus one step (64 KiB)
however small and explosive the input is (a 3 KB brotli body can expand to gigabytes).

- :func:`inflate_zlib`: one zlib (RFC 1950), gzip (RFC 1952) or raw deflate (RFC 1951)
  stream, as chosen by ``wbits`` (the :func:`zlib.decompressobj` rule);
  :func:`crawlfw.utils.gz.gunzip` and the ``deflate`` coding use it.
- :func:`unbrotli`: brotli (RFC 7932), with the ``brotli`` (or ``brotlicffi``) module
  version 1.2 or later, whose ``Decompressor.process(data, output_buffer_limit=...)``
  bounds each step's output; :data:`brotli` is None when no such module is importable.
  Older versions inflate a whole input slice at once, unbounded: they are not used.
- :func:`unzstd`: Zstandard (RFC 8878), with the optional ``zstandard`` module (a
  stream reader across frames); :data:`zstandard` is None when it is not installed.

Each raises :class:`DecompressionMaxSizeExceeded` as soon as the output
would exceed ``max_size`` bytes (``max_size`` 0: no limit).
"""

from __future__ import annotations

import zlib

try:
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    try:
        import brotlicffi as _brotli
    except ImportError:
        _brotli = None

try:
    import zstandard
except ImportError:  # pragma: no cover - depends on the environment
    zstandard = None

__all__ = [
    "ACCEPTED_ENCODINGS",
    "DecompressionMaxSizeExceeded",
    "brotli",
    "brotli_too_old",
    "zstandard",
    "inflate_zlib",
    "unbrotli",
    "unzstd",
    "STEP_BYTES",
]

class DecompressionMaxSizeExceeded(ValueError):
    """The decompressed data would exceed the ``max_size`` given to the decoder
    (``DOWNLOAD_MAXSIZE``). Also importable from :mod:`crawlfw.utils.gz`."""


#: Input slice fed per step, and the most output one step may produce, in bytes.
STEP_BYTES = 64 * 1024

#: The brotli module when it can bound its output (``can_accept_more_data``, brotli and
#: brotlicffi 1.2+), else None.
brotli = _brotli if _brotli is not None and hasattr(_brotli.Decompressor,
                                                    "can_accept_more_data") else None

#: The version of an installed brotli module too old to decode safely, else None.
brotli_too_old = (
    getattr(_brotli, "__version__", "unknown") if _brotli is not None and brotli is None else None
)

#: Codings offered in ``Accept-Encoding`` (by ``HttpCompressionMiddleware``), in this
#: order: those this module can decode.
ACCEPTED_ENCODINGS = (
    [b"gzip", b"deflate"]
    + ([b"br"] if brotli is not None else [])
    + ([b"zstd"] if zstandard is not None else [])
)


def _too_big(coding: str, max_size: int) -> DecompressionMaxSizeExceeded:
    return DecompressionMaxSizeExceeded(f"{coding} data decompresses to more than {max_size} bytes")


def inflate_zlib(data, wbits: int, max_size: int, output: bytearray,
                 start: int = 0, coding: str = "deflate") -> tuple[bool, int]:
    """Inflate one zlib/gzip/raw-deflate stream of ``data[start:]`` into ``output``.

    Args:
        data: the compressed bytes (``bytes`` or a ``memoryview``).
        wbits: as :func:`zlib.decompressobj`: ``zlib.MAX_WBITS`` (zlib),
            ``16 + zlib.MAX_WBITS`` (gzip), ``-zlib.MAX_WBITS`` (raw deflate).
        max_size: the largest total size of ``output`` allowed, in bytes (0: no limit).
        output: the buffer the decoded bytes are appended to (it may already hold the
            output of earlier streams; the limit counts them).
        start: offset in ``data`` where the stream starts.
        coding: the coding's name, for the error message.

    Returns:
        ``(complete, end)``: whether the stream's end was reached, and the offset in
        ``data`` just after it (``len(data)`` when incomplete). Output that the stream
        decodes to before it is cut short is kept in ``output``.

    Raises:
        zlib.error: the data is corrupt (what decoded before stays in ``output``).
        DecompressionMaxSizeExceeded: ``output`` would exceed ``max_size`` bytes.
    """
    decompressor = zlib.decompressobj(wbits)
    decompress = decompressor.decompress
    view = memoryview(data)
    size = len(view)
    pos = start
    while pos < size:
        piece = view[pos:pos + STEP_BYTES]
        pos += len(piece)
        while True:
            output += decompress(piece, STEP_BYTES)
            if max_size and len(output) > max_size:
                raise _too_big(coding, max_size)
            if decompressor.eof:
                return True, pos - len(decompressor.unused_data)
            piece = decompressor.unconsumed_tail
            if not piece:
                break
    # Input exhausted mid-stream: collect what zlib still buffers (a few bytes at most).
    output += decompressor.flush()
    if max_size and len(output) > max_size:
        raise _too_big(coding, max_size)
    return decompressor.eof, size


def unbrotli(data: bytes, max_size: int) -> bytes:
    """Decode a brotli body (RFC 7932), at most :data:`STEP_BYTES` of output per step.

    A truncated stream gives what decoded before the cut, as browsers show it.

    Args:
        data: the compressed bytes.
        max_size: the largest decoded size allowed, in bytes (0: no limit).

    Returns:
        The decoded bytes.

    Raises:
        RuntimeError: no brotli module 1.2+ is installed (:data:`brotli` is None).
        brotli.error: the data is corrupt.
        DecompressionMaxSizeExceeded: the output would exceed ``max_size`` bytes.
    """
    if brotli is None:
        raise RuntimeError("decoding br needs the brotli (or brotlicffi) module, version 1.2+")
    decompressor = brotli.Decompressor()
    process = decompressor.process
    can_accept = decompressor.can_accept_more_data
    output = bytearray()
    size = len(data)
    pos = 0
    while True:
        if pos < size and can_accept():
            piece = data[pos:pos + STEP_BYTES]
            pos += len(piece)
        else:
            piece = b""  # drain what the decoder holds before feeding more
        chunk = process(piece, output_buffer_limit=STEP_BYTES)
        if not chunk and not piece:
            break  # all input fed and nothing more comes out
        output += chunk
        if max_size and len(output) > max_size:
            raise _too_big("brotli", max_size)
    return bytes(output)


def unzstd(data: bytes, max_size: int) -> bytes:
    """Decode a Zstandard body (RFC 8878; every frame), :data:`STEP_BYTES` at a time.

    Args:
        data: the compressed bytes.
        max_size: the largest decoded size allowed, in bytes (0: no limit).

    Returns:
        The decoded bytes.

    Raises:
        RuntimeError: the ``zstandard`` module is not installed.
        zstandard.ZstdError: the data is corrupt or truncated.
        DecompressionMaxSizeExceeded: the output would exceed ``max_size`` bytes.
    """
    if zstandard is None:
        raise RuntimeError("decoding zstd needs the zstandard module")
    output = bytearray()
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    with reader:
        while True:
            chunk = reader.read(STEP_BYTES)
            if not chunk:
                break
            output += chunk
            if max_size and len(output) > max_size:
                raise _too_big("zstd", max_size)
    return bytes(output)
