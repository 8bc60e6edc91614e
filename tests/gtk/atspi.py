#!/usr/bin/python3
"""Reads and drives elicit-gtk through the accessibility bus (AT-SPI).

Run with the system Python (/usr/bin/python3), which has pyatspi:

    atspi.py wait TEXT...      until every TEXT shows in elicit-gtk's tree
    atspi.py absent TEXT       until TEXT no longer shows
    atspi.py click NAME        performs the first action of the widget named NAME
    atspi.py checked NAME...   until every check or radio button named NAME is on
    atspi.py dump              prints the tree
    atspi.py x NAME...         until each widget named NAME shows: their left
                               edges, one a line (to compare layouts)
    atspi.py y NAME...         until each widget named NAME shows: its top and
                               bottom edges, one widget a line, then the
                               window's height (is it in view?)

Every wait polls the tree for its condition and gives up after
ATSPI_DEADLINE seconds (20 by default), printing the tree it last saw.
"""

import os
import sys
import time

import pyatspi

APP = os.environ.get("ATSPI_APP", "elicit-gtk")
DEADLINE = float(os.environ.get("ATSPI_DEADLINE", "20"))


def application():
    desktop = pyatspi.Registry.getDesktop(0)
    desktop.clear_cache()
    for app in desktop:
        if app is not None and app.name == APP:
            app.clear_cache()
            return app
    return None


def walk(node, depth=0):
    """Every visible node under `node`, with its depth (GTK 4.8 sets no
    SHOWING state below the window; hidden widgets leave the tree)."""
    yield node, depth
    try:
        children = list(node)
    except Exception:
        return
    for child in children:
        if child is None:
            continue
        try:
            if not child.getState().contains(pyatspi.STATE_VISIBLE):
                continue
        except Exception:
            continue
        yield from walk(child, depth + 1)


def text_of(node):
    """The name, description and text content of a node."""
    parts = [node.name or "", node.description or ""]
    try:
        text = node.queryText()
        parts.append(text.getText(0, -1) or "")
    except Exception:
        pass
    return [p for p in parts if p]


def snapshot():
    """(depth, role, texts, node) of every visible node, or [] without the app."""
    app = application()
    if app is None:
        return []
    out = []
    for node, depth in walk(app):
        try:
            out.append((depth, node.getRoleName(), text_of(node), node))
        except Exception:
            continue
    return out


def dump(nodes):
    return "\n".join(
        "  " * depth + f"[{role}] " + " | ".join(texts) for depth, role, texts, _ in nodes
    )


def present(nodes, wanted):
    return any(wanted in t for _, _, texts, _ in nodes for t in texts)


def until(condition, what):
    end = time.monotonic() + DEADLINE
    nodes = []
    while time.monotonic() < end:
        nodes = snapshot()
        found = condition(nodes)
        if found:
            return found, nodes
        time.sleep(0.05)
    sys.stderr.write(f"timed out waiting for {what}; the tree:\n{dump(nodes)}\n")
    sys.exit(1)


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "wait":
        _, nodes = until(lambda n: all(present(n, t) for t in args), f"{args}")
        print(dump(nodes))
    elif command == "absent":
        until(lambda n: not any(present(n, t) for t in args), f"{args} to go")
    elif command == "click":
        name = args[0]

        def target(nodes):
            for _, _, _, node in nodes:
                try:
                    state = node.getState()
                    if node.name == name and state.contains(pyatspi.STATE_SENSITIVE):
                        return node
                except Exception:
                    continue
            return None

        node, _ = until(target, f"a widget named {name!r}")
        action = node.queryAction()
        if not action.doAction(0):
            sys.stderr.write(f"{name!r}: action {action.getName(0)!r} failed\n")
            sys.exit(1)
    elif command == "checked":

        def checked(nodes):
            on = set()
            for _, _, _, node in nodes:
                try:
                    if node.getState().contains(pyatspi.STATE_CHECKED):
                        on.add(node.name)
                except Exception:
                    continue
            return all(name in on for name in args)

        until(checked, f"{args} to be checked")
    elif command == "x":

        def edges(nodes):
            found = {}
            for _, _, _, node in nodes:
                try:
                    if node.name in args and node.name not in found:
                        extents = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
                        if extents.width > 0:
                            found[node.name] = extents.x
                except Exception:
                    continue
            return [found[name] for name in args] if len(found) == len(args) else None

        found, _ = until(edges, f"the extents of {args}")
        print("\n".join(str(x) for x in found))
    elif command == "y":

        def spans(nodes):
            found = {}
            for _, _, _, node in nodes:
                try:
                    if node.name in args and node.name not in found:
                        extents = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
                        if extents.height > 0:
                            found[node.name] = (extents.y, extents.y + extents.height)
                except Exception:
                    continue
            return [found[name] for name in args] if len(found) == len(args) else None

        found, _ = until(spans, f"the extents of {args}")
        window = application()[0].queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        print("\n".join(f"{top} {bottom}" for top, bottom in found))
        print(window.height)
    elif command == "dump":
        print(dump(snapshot()))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
