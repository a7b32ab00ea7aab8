"""The sprint loop's plain parts.

Contracts in dependency order, the generator's prompt, the guard, the iteration journal, engines.
"""
