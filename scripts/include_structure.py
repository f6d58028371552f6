#!/usr/bin/env python3
"""The structure of the product's includes, read from the files (issue 41).

A component is a header and its sources: `x.hpp`, `x.cpp`, `x_impl.hpp`, and `x_posix.cpp` /
`x_win32.cpp` are one component `x`. The product's folders (hashing, store and its subfolders,
core, capture, shim, tools) must form no cycle, and no two components may reach each other
through their includes. `--check` exits 1 naming every cycle; `--report` prints lines per folder and the biggest
files (the before/after numbers of a redesign).
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PRODUCT = ["hashing", "store", "core", "capture", "shim", "tools"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SUFFIXES = ("_impl", "_posix", "_win32")


def product_files():
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".cpp", ".hpp", ".h") and "tests" not in path.parts:
                yield path.relative_to(ROOT)


def component(path):
    stem = str(path.with_suffix(""))
    for suffix in SUFFIXES:
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def folder(path):
    return str(path.parent)


def graph(files):
    known = {str(f): f for f in files}
    edges = {}
    for f in files:
        text = (ROOT / f).read_text(errors="replace")
        for name in INCLUDE.findall(text):
            target = known.get(name) or known.get(str(f.parent / name))
            if target is None:
                continue
            a, b = component(f), component(target)
            if a != b:
                edges.setdefault(a, set()).add(b)
    return edges


def cycles(edges):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    nodes = set(edges) | {b for bs in edges.values() for b in bs}
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    out.append(sorted(members))
    return out


def folder_edges(edges):
    out = {}
    for a, bs in edges.items():
        for b in bs:
            fa, fb = str(pathlib.Path(a).parent), str(pathlib.Path(b).parent)
            if fa != fb:
                out.setdefault(fa, set()).add(fb)
    return out


def report(files):
    lines = {}
    sizes = []
    for f in files:
        n = sum(1 for _ in open(ROOT / f, errors="replace"))
        lines[folder(f)] = lines.get(folder(f), 0) + n
        sizes.append((n, str(f)))
    print("lines per folder:")
    for name in sorted(lines):
        print(f"  {name:28} {lines[name]:6}")
    print(f"  {'total':28} {sum(lines.values()):6}")
    print("ten biggest files:")
    for n, name in sorted(sizes, reverse=True)[:10]:
        print(f"  {n:6}  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on any include cycle")
    parser.add_argument("--report", action="store_true", help="lines per folder, biggest files")
    args = parser.parse_args()
    files = list(product_files())
    edges = graph(files)
    if args.report:
        report(files)
    found = [("components", c) for c in cycles(edges)] + [("folders", c) for c in cycles(folder_edges(edges))]
    for kind, members in found:
        print(f"include cycle between {kind}: " + " <-> ".join(members))
    if not found:
        print(f"no include cycle among {len(set(map(component, files)))} components")
    return 1 if (args.check and found) else 0


if __name__ == "__main__":
    sys.exit(main())
