"""Test plugin: its tools live in ``tools.py`` (the platform imports that submodule itself)."""


def register_commands(app):  # the CLI hook: ``maxy echo hello [NAME]``
    import typer

    echo_app = typer.Typer(no_args_is_help=True, help="The echo test plugin.")
    app.add_typer(echo_app, name="echo")

    @echo_app.command("hello")
    def hello(name: str = typer.Argument("world")) -> None:
        """Say hello."""
        typer.echo(f"hello {name} from the echo plugin")
