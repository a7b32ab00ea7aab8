"""The sandbox strategies run in: the base image, and each project's own layers on top of it.

* :mod:`.image` builds the base image from Debian packages (no registry);
* :mod:`.runtimes` reads the node and python a project declares and picks what judges it;
* :mod:`.registry` fetches node and npm from the npm registry, verified and cached;
* :mod:`.dependencies` turns manifests and lockfiles into the setup step's script;
* :mod:`.layers` builds the runtime and dependency layers, keyed by content;
* :mod:`.prepare` is what an evaluation calls before any strategy runs;
* :mod:`.prune` keeps the cache bounded.
"""
