"""What a project is: the checks its own files say it can run (:mod:`.detect`), and the first
configuration and contracts written from them (:mod:`.init`)."""
