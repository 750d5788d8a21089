"""Transport: the pycurl transfers (:mod:`.curl`), the download slots that queue them per
host (:mod:`.slot`, :mod:`.slots`) and the one politeness rule of a host (:mod:`.hostpolicy`)."""
