"""FTP helpers (Scrapy 1.2's ``scrapy.utils.ftp``)."""

import posixpath
from contextlib import closing
from ftplib import FTP, FTP_TLS, error_perm
from typing import IO

__all__ = ["ftp_makedirs_cwd", "ftp_store_file"]


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


def ftp_store_file(*, path: str, file: IO[bytes], host: str, port: int, username: str,
                   password: str, use_active_mode: bool = False, overwrite: bool = True,
                   tls: bool = False) -> None:
    """Upload ``file`` to ``path`` on an FTP server (Scrapy 2's helper of the FTP feed
    storage and files store), creating the directories of ``path`` as needed.

    The file is read from its start and closed afterwards, as is the connection.

    Args:
        path: the remote file's path (``/``-separated).
        file: a binary file object open for reading.
        host: the server's host name or address.
        port: its TCP port.
        username: the login name.
        password: its password.
        use_active_mode: True for active mode (``PORT``), False for passive (``PASV``).
        overwrite: True stores with ``STOR`` (replacing the file), False appends
            (``APPE``).
        tls: True secures the session with explicit TLS (FTPS, ``AUTH TLS``), checking
            the server's certificate against the system's trust store, and protects the
            data connection (``PROT P``).

    Raises:
        ftplib.all_errors: the connection, login or transfer fails
            (``ftplib.error_perm`` for a permission refused).
    """
    if tls:
        from ssl import create_default_context

        ftp = FTP_TLS(context=create_default_context())
    else:
        ftp = FTP()
    with ftp, closing(file):
        ftp.connect(host, port)
        ftp.login(username, password)
        if isinstance(ftp, FTP_TLS):
            ftp.prot_p()
        if use_active_mode:
            ftp.set_pasv(False)
        file.seek(0)
        dirname, filename = posixpath.split(path)
        ftp_makedirs_cwd(ftp, dirname)
        ftp.storbinary(f"{'STOR' if overwrite else 'APPE'} {filename}", file)
