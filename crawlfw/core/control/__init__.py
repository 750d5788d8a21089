"""Control: the control endpoint's protocol (:mod:`.protocol`: sockets, peers, wire format,
client) and the plain parts of supervision (:mod:`._supervision`)."""
