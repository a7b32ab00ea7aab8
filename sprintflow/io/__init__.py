"""Storage and processes.

The workspace layout (every path), atomic files and locks, the one place host processes
start, git, content hashes.
"""
