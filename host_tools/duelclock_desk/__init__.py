# duelclock_desk: the judges' desk (CLI, links, store, dashboard). CPython only.
