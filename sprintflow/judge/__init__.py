"""The judge builds what it judges.

The agent under test may write anything in its workspace, so the judge never judges the
workspace. It keeps the workspace's files in a store of its own (:mod:`.store`), outside the
workspace and hidden from every contained command; pins the tree as it was when the sprint
started (the *baseline*); after each generator step takes the generator's change against it,
admits only what an allowlist derived from the contract and the project's layout admits
(:mod:`.areas`, :mod:`.change`), and builds the judged tree from the baseline plus that change
(:mod:`.tree`). Strategies, the tester's tests and custom criteria run on that tree, never on
the workspace.
"""
