"""Score a skill prompt against its held-out cases."""
