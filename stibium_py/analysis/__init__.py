"""Pure statistics: arrays in, frozen results out; no I/O, no printing (docs/methods.md)."""
