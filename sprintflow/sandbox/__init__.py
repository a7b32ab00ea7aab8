"""Where the judged commands run: the executors, and the Docker images and layers they run on.

* :mod:`.executors` runs a strategy's commands: in a container, or as a contained host process;
* :mod:`.docker_host` shares one Docker host among many evaluations, and cleans up after killed runs;
* :mod:`.scripts` are the stdlib-only scripts the executors carry beside the code under test;
* :mod:`.image` builds the base image from Debian packages (no registry);
* :mod:`.runtimes` reads the node and python a project declares and picks what judges it;
* :mod:`.downloads` fetches node and npm from the npm registry, verified and cached;
* :mod:`.dependencies` turns manifests and lockfiles into the setup step's script;
* :mod:`.layers` builds the runtime and dependency layers, keyed by content;
* :mod:`.prepare` is what an evaluation calls before any strategy runs;
* :mod:`.runner_image` builds the Docker work pool's flow-run image on the sandbox image;
* :mod:`.prune` keeps the cache bounded.
"""
