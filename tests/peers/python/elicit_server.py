"""A small MCP server of the project's that elicits in both protocol eras.

* `book` — a resolver (`Resolve` + `Elicit`): on 2025 eras the SDK sends a
  standalone `elicitation/create`; on 2026-07-28 it answers `tools/call` with
  `resultType: "input_required"` and a sealed `requestState`.
* `two_step` — two chained resolvers, so on 2026-07-28 it needs several rounds.
* `legacy_ask` — `ctx.elicit` directly (2025 eras only).

Run with the pinned `mcp` package on PYTHONPATH (see ../INSTALL.sh).
"""

from typing import Annotated

from pydantic import BaseModel, Field

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve

server = MCPServer("elicit-test-server", version="1.0.0")


class Seat(BaseModel):
    seat: str = Field(description="Which seat", min_length=1)
    count: int = Field(description="How many", ge=1, le=9)


class Meal(BaseModel):
    meal: str = Field(description="Which meal")


def ask_seat() -> Elicit[Seat]:
    return Elicit("Which seat, and how many?", Seat)


def ask_meal(seat: Annotated[Seat, Resolve(ask_seat)]) -> Elicit[Meal]:
    return Elicit(f"A meal for seat {seat.seat}?", Meal)


@server.tool()
def book(answer: Annotated[ElicitationResult[Seat], Resolve(ask_seat)]) -> str:
    """Book a seat, asking the user which."""
    if isinstance(answer, AcceptedElicitation):
        return f"booked {answer.data.count} x {answer.data.seat}"
    return f"not booked: {answer.action}"


@server.tool()
def two_step(
    seat: Annotated[Seat, Resolve(ask_seat)],
    meal: Annotated[Meal, Resolve(ask_meal)],
) -> str:
    """Two questions, one after the other."""
    return f"seat {seat.seat} with {meal.meal}"


@server.tool()
async def legacy_ask(ctx: Context) -> str:
    """Ask with ctx.elicit (standalone elicitation/create)."""
    result = await ctx.elicit("Your name?", Meal)
    if isinstance(result, AcceptedElicitation):
        return f"hello {result.data.meal}"
    return f"no answer: {result.action}"


if __name__ == "__main__":
    server.run()
