"""FTP helpers (Scrapy 1.2's ``scrapy.utils.ftp``)."""

import posixpath
from ftplib import error_perm

__all__ = ["ftp_makedirs_cwd"]


def ftp_makedirs_cwd(ftp, path, first_call=True):
    """Change the FTP session's directory to ``path``, creating missing directories.

    Like ``os.makedirs`` followed by a ``cd``: each missing parent is created (``MKD``)
    from the top down.

    Args:
        ftp: a connected, logged-in ``ftplib.FTP``.
        path: the directory (``/``-separated; absolute, or relative to the current one).
        first_call: internal (recursion); callers leave it True.

    Raises:
        ftplib.error_perm: a directory cannot be created or entered (permissions).
    """
    if first_call and not path.startswith("/"):
        path = posixpath.join(ftp.pwd(), path)  # absolute: a cwd below must not move it
    try:
        ftp.cwd(path)
    except error_perm:
        parent = posixpath.dirname(path)
        if parent and parent != path:
            ftp_makedirs_cwd(ftp, parent, False)
        ftp.mkd(path)
        if first_call:
            ftp.cwd(path)
