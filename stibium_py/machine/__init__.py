"""The machine's facts: its system and the target's file system and device (sysinfo, macOS's I/O Registry in
iokit), what lies below the file system (stack), what memory can do (memory) and the link to a network store
(link)."""
