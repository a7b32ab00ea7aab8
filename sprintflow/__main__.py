from sprintflow.cli import main

main()
