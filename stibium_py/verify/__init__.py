"""`stibium verify TARGET`: does this drive keep what it is given? Fill the target's free space with files of
signed blocks, written uncached with the rate along the way, empty the page cache of them and prove it, read
every block back uncached and check it: the bytes that came back right, blocks that hold another block (a drive
that wraps its writes around a smaller real capacity), corrupted and unreadable blocks (docs/methods.md,
"Does this drive keep what it is given?")."""
