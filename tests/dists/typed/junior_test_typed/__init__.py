from junior_core import Source, hookimpl, tool


@tool(keywords=["salute", "welcome"])
def greet(name: str, times: int = 1) -> str:
    """Greet someone by name, as many times as asked."""
    return " ".join([f"Hello, {name}!"] * times)


@hookimpl
def register_sources(register):
    register(Source("greetings", "Greetings for people by name."), tools=[greet])
