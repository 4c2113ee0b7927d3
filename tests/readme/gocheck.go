// SPDX-License-Identifier: AGPL-3.0-only
//
// gocheck FILE: what Go's own tools can say of a README block whose imports
// cannot be had here (make readme-blocks, tests/readme/blocks_test.py). The
// OpenFeature Go SDK and its OFREP provider are not Debian packages and the
// Go module proxy is not reachable from this machine, so the block is not
// compiled; this holds it to what needs no import: it parses (go/parser, as
// gofmt does), it is a whole program (package main, func main), every
// package it names is imported and every import is used (the compiler's
// "undefined" and "imported and not used" for a single file). It prints
// nothing and exits 0, or names each fault and exits 1.
//
// Standard library only, for Debian 12's Go 1.19.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"sort"
	"strconv"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gocheck FILE.go")
		os.Exit(2)
	}
	faults := check(os.Args[1])
	for _, f := range faults {
		fmt.Fprintln(os.Stderr, f)
	}
	if len(faults) > 0 {
		os.Exit(1)
	}
}

func check(file string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.AllErrors)
	if err != nil {
		return []string{err.Error()}
	}
	var faults []string
	if f.Name.Name != "main" {
		faults = append(faults, fmt.Sprintf("%s: package %s, not main: not a program", file, f.Name.Name))
	}
	if !hasMain(f) {
		faults = append(faults, fmt.Sprintf("%s: no func main", file))
	}

	// The name each import binds: its own name when given, else the last
	// element of its path (true of every package this block imports).
	imported := map[string]token.Pos{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			faults = append(faults, fmt.Sprintf("%s: import %s: %v", fset.Position(imp.Pos()), imp.Path.Value, err))
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imported[name] = imp.Pos()
	}

	// The parser resolves what the file declares; what is left is a
	// package name, a predeclared identifier, or undefined.
	used := map[string]bool{}
	for _, id := range f.Unresolved {
		if _, ok := imported[id.Name]; ok {
			used[id.Name] = true
		} else if types.Universe.Lookup(id.Name) == nil {
			faults = append(faults, fmt.Sprintf("%s: undefined: %s (not imported, not declared)", fset.Position(id.Pos()), id.Name))
		}
	}
	var unused []string
	for name := range imported {
		if !used[name] && name != "_" {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	for _, name := range unused {
		faults = append(faults, fmt.Sprintf("%s: %s imported and not used", fset.Position(imported[name]), name))
	}
	return faults
}

func hasMain(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "main" {
			return true
		}
	}
	return false
}
