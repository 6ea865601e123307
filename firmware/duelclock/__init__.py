# duelclock: the table firmware. `core/` is pure; the modules beside it do the I/O.
VERSION = "0.1.0"
