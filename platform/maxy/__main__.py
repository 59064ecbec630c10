from maxy.cli import main

main()
