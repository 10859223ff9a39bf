"""Draws contactbench's module graph from the source's own paths, and reports what breaks
the layering of docs/design.md §9: a module naming a higher layer, and cycles between
the files of one module.

Every path written in code (`use` lines and paths in expressions, `crate::`, `super::`,
`self::`, and `contactbench::` in the command line's files) is resolved to the module it
names; comments, doc comments and string literals are skipped (a doc link may point up).
A path through a `mod.rs` re-export (`super::StepMetrics`) counts as a path to the file
that defines it. tests/layering.rs enforces the same rules in the test suite.

Usage: python3 tools/layers.py [SRC]   (default: the src/ beside this script; exit 1 when
something breaks the layering)
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

# Lowest first; a module may name only modules before it.
LAYERS = ["output", "model", "dynamics", "collision", "problem", "metrics", "solvers", "derivatives",
          "simulation", "report", "corpus", "paper", "cli"]
LIBRARY = "contactbench"


RAW = re.compile(r'b?r(#*)"')
CHAR = re.compile(r"b?'(\\.[^']*|[^\\'])'")


def strip(code):
    """The code without comments, string and char literals (kept: line breaks)."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        word = i > 0 and (code[i - 1].isalnum() or code[i - 1] == "_")
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif code.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if code.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif code.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if code[i] == "\n" else "")
                    i += 1
        elif not word and (m := RAW.match(code, i)):
            end = code.find('"' + m.group(1), m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append("\n" * code.count("\n", i, end) + '""')
            i = end
        elif c == '"' or (not word and code.startswith('b"', i)):
            j = i + (2 if c == "b" else 1)
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append("\n" * code.count("\n", i, j) + '""')
            i = j + 1
        elif not word and (m := CHAR.match(code, i)):
            out.append("' '")
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_path(file, src):
    """`src/simulation/scenario/check.rs` -> (crate, ["simulation", "scenario", "check"])."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    binary = file.name == "main.rs" or (parts and parts[0] == "cli")
    return ("bin" if binary else "lib"), tuple(parts)


def paths_in(code):
    """Every path starting with crate/super/self/contactbench, groups expanded, with the
    line it starts on and the inline modules (`mod tests {`) it is written in."""
    found, scopes, depth = [], [], 0
    token = re.compile(r"\bmod\s+(\w+)\s*\{|[{}]|\b((?:crate|super|self|%s)(?:::\w+)*)::(\{)?"
                       % LIBRARY)
    pos = 0
    while m := token.search(code, pos):
        pos = m.end()
        if m.group(1):
            depth += 1
            scopes.append((m.group(1), depth))
        elif m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            if scopes and scopes[-1][1] == depth:
                scopes.pop()
            depth -= 1
        else:
            line = code.count("\n", 0, m.start()) + 1
            inner = [s for s, _ in scopes]
            heads = m.group(2).split("::")
            if m.group(3):
                body, pos = group_body(code, pos)
                for item in split_top(body):
                    found.append((heads + re.findall(r"\w+", item)[:1], line, inner))
            else:
                rest = re.match(r"\w+", code[pos:])
                found.append((heads + ([rest.group(0)] if rest else []), line, inner))
    return found


def group_body(code, pos):
    depth, start = 1, pos
    while pos < len(code) and depth:
        depth += {"{": 1, "}": -1}.get(code[pos], 0)
        pos += 1
    return code[start:pos - 1], pos


def split_top(body):
    items, depth, start = [], 0, 0
    for k, c in enumerate(body):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            items.append(body[start:k])
            start = k + 1
    return items + [body[start:]]


def resolve(segments, crate, here):
    """The absolute module path a path names, from module `here` of `crate`."""
    head, rest = segments[0], list(segments[1:])
    if head == LIBRARY:
        return "lib", rest
    if head == "crate":
        return crate, rest
    base = list(here)
    if head == "super":
        base = base[:-1]
    while rest and rest[0] == "super":
        base, rest = base[:-1], rest[1:]
    return crate, base + rest


class Graph:
    def __init__(self, src):
        self.src = Path(src)
        self.files = sorted(self.src.rglob("*.rs"))
        self.modules = {module_path(f, self.src) for f in self.files}
        self.exports = self.read_exports()
        # (crate, parent path) -> {(from, to): [(file, line)]}
        self.edges = defaultdict(lambda: defaultdict(list))
        for f in self.files:
            self.read_file(f)

    def is_module(self, crate, path):
        return (crate, tuple(path)) in self.modules

    def read_exports(self):
        """`pub use child::...::Name` in a mod.rs or lib.rs: Name -> child."""
        exports = {}
        for f in self.files:
            if f.name not in ("mod.rs", "lib.rs"):
                continue
            crate, here = module_path(f, self.src)
            for segments, _, inner in paths_in(strip("\n".join(
                    re.sub(r"^\s*pub use (\w)", r"self::\1", line)
                    for line in f.read_text().splitlines()))):
                if segments[0] == "self" and len(segments) >= 3 and not inner:
                    exports[(crate, tuple(here), segments[-1])] = segments[1]
        return exports

    def canonical(self, crate, path):
        """`simulation::StepMetrics` (a re-export) -> `simulation::step::StepMetrics`."""
        for k in range(len(path)):
            child = self.exports.get((crate, tuple(path[:k]), path[k]))
            if child and not self.is_module(crate, path[:k + 1]):
                return path[:k] + [child] + path[k:]
        return path

    def read_file(self, file):
        crate, here = module_path(file, self.src)
        here = list(here)
        for segments, line, inner in paths_in(strip(file.read_text())):
            target_crate, target = resolve(segments, crate, here + inner)
            target = self.canonical(target_crate, target)
            if target_crate != crate:
                self.edges[("bin", ())][(here[0] if here else "cli", target[0])].append(
                    (file, line))
                continue
            k = 0
            while k < min(len(here), len(target)) and here[k] == target[k]:
                k += 1
            if k < len(here) and k < len(target) and self.is_module(crate, target[:k + 1]):
                key = (here[k], target[k])
                self.edges[(crate, tuple(here[:k]))][key].append((file, line))

    def top(self):
        """Edges between the top modules, the command line's included."""
        top = defaultdict(list)
        for key in [("lib", ()), ("bin", ())]:
            for (a, b), where in self.edges[key].items():
                top[("cli" if key[0] == "bin" else a, b)].extend(where)
        return top

    def upward(self):
        rank = {m: k for k, m in enumerate(LAYERS)}
        return {(a, b): w for (a, b), w in self.top().items()
                if a in rank and b in rank and rank[b] > rank[a]}

    def inner_graphs(self):
        return {"/".join(p): e for (c, p), e in sorted(self.edges.items()) if p}


def cycles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    nodes = sorted({x for e in edges for x in e})
    succ = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def order(edges):
    """The nodes lowest first (each after what it names), ties by name."""
    nodes = sorted({x for e in edges for x in e})
    done, out = set(), []
    while len(out) < len(nodes):
        ready = [n for n in nodes if n not in done
                 and all(b in done or b == n for a, b in edges if a == n)]
        if not ready:  # a cycle: the rest, by name
            out += [n for n in nodes if n not in done]
            break
        out.append(ready[0])
        done.add(ready[0])
    return out


def main():
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent.parent / "src"
    g = Graph(src)
    bad = 0
    top = g.top()
    print("modules, lowest first, and the modules each names (number of paths):")
    for m in LAYERS:
        named = sorted((b, len(w)) for (a, b), w in top.items() if a == m and b != m)
        print(f"  {m:<11} -> " + " ".join(f"{b}({n})" for b, n in named))
    for (a, b), where in sorted(g.upward().items()):
        bad += 1
        places = ", ".join(f"{f.relative_to(src)}:{l}" for f, l in where[:3])
        print(f"UPWARD {a} -> {b}: {places}" + (" ..." if len(where) > 3 else ""))
    for name, edges in g.inner_graphs().items():
        pairs = {e for e in edges if e[0] != e[1]}
        print(f"\n{name}/, lowest first:")
        for n in order(pairs):
            print(f"  {n:<16} -> " + " ".join(sorted(b for a, b in pairs if a == n)))
        for comp in cycles(pairs):
            bad += 1
            print(f"CYCLE in {name}/: " + " <-> ".join(comp))
    print(f"\n{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
