package extract

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// codeBlocks extracts src as the file name and returns its blocks as "symbol@line first-line".
func codeBlocks(t *testing.T, name, src string) []string {
	t.Helper()
	x, err := shared.Extract(context.Background(), name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range x.Blocks {
		first := b.Text
		for i, c := range first {
			if c == '\n' {
				first = first[:i]
				break
			}
		}
		out = append(out, fmt.Sprintf("%s@%d %s", b.Symbol, b.Line, first))
	}
	return out
}

func TestCode_Go(t *testing.T) {
	src := `// Package p is an example.
package p

import "fmt"

// Limits are grouped.
const (
	A = 1
	B = 2
)

// T is a type.
type T[K comparable] struct{ k K }

// Get returns k.
//
// Its doc comment has two paragraphs.
func (t *T[K]) Get() K { return t.k }

// a floating comment, not a doc comment

func helper() {
	fmt.Println("}")
}
// trailing comment
`
	got := codeBlocks(t, "p.go", src)
	want := []string{
		"p@1 // Package p is an example.",
		"p.A, B@6 // Limits are grouped.",
		"p.T@12 // T is a type.",
		"p.T.Get@15 // Get returns k.",
		"p.helper@20 // a floating comment, not a doc comment",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks\n%q\nwant\n%q", got, want)
	}
}

func TestCode_GoThatDoesNotParseUsesBraces(t *testing.T) {
	got := codeBlocks(t, "p.go", "package p\n\nfunc A() {\n\tif x {\n}\n\nfunc B() {\n}\n")
	if len(got) == 0 || got[0] != "@1 package p" {
		t.Errorf("blocks %q", got)
	}
}

func TestCode_BraceLanguages(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            []string
	}{
		{"TypeScript", "w.ts", "import { x } from \"y\";\nimport z from 'z'\n\n/** Adds. */\nexport function add(a: number): number {\n" +
			"  const s = \"}{\"; // }\n  return a;\n}\n\nexport const mul = (a: number): number => {\n  return a;\n};\n\n" +
			"@Component({ selector: \"x\" })\nexport class Widget extends Base {\n  private count = 0;\n\n" +
			"  /** Renders. */\n  render(): string {\n    if (this.count > 0) {\n      return `}`;\n    }\n    return \"\";\n  }\n\n" +
			"  static Inner = class {\n  };\n}\n",
			[]string{
				"@1 import { x } from \"y\";",
				"add@4 /** Adds. */",
				"mul@10 export const mul = (a: number): number => {",
				"Widget@14 @Component({ selector: \"x\" })",
				"Widget.render@18   /** Renders. */",
				"Widget@26   static Inner = class {",
			}},
		{"JavaNestedClass", "Outer.java", "package x;\n\npublic class Outer {\n  int n;\n\n  @Override\n  public String toString() {\n    return \"{\";\n  }\n\n" +
			"  static class Nested {\n    void run() {\n      char c = '{';\n    }\n  }\n}\n",
			[]string{
				"@1 package x;",
				"Outer@3 public class Outer {",
				"Outer.toString@6   @Override",
				"Outer.Nested@11   static class Nested {",
				"Outer.Nested.run@12     void run() {",
			}},
		{"RustImpl", "p.rs", "use std::fmt;\n\n/// A point.\n#[derive(Debug)]\npub struct Point { x: i32 }\n\nimpl<'a> fmt::Display for Point {\n" +
			"    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        write!(f, \"{}\", self.x)\n    }\n}\n\n" +
			"pub fn main() {\n    let c = '{';\n}\n",
			[]string{
				"@1 use std::fmt;",
				"Point@3 /// A point.",
				"Point@7 impl<'a> fmt::Display for Point {",
				"Point.fmt@8     fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {",
				"main@13 pub fn main() {",
			}},
		{"CBraceOnNextLine", "m.c", "#include <stdio.h>\n\nstatic int count(const char *s) {\n  return 0;\n}\n\nint main(void)\n{\n  return count(\"}\");\n}\n",
			[]string{"@1 #include <stdio.h>", "count@3 static int count(const char *s) {", "main@7 int main(void)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := codeBlocks(t, tt.file, tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("blocks\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestCode_Python(t *testing.T) {
	src := `"""Module doc."""
import os

X = {
"a": 1,
}


@decorator
def top(a, b):
    """Top doc.
not indented inside the string
    """
    return (a +
b)


class Outer:
    """Outer doc."""
    attr = 1

    def method(self):
        return 1

    class Inner:
        def deep(self):
            pass

    # comment for after
    async def after(self):
        pass


def last():
    pass
`
	want := []string{
		`@1 """Module doc."""`,
		"top@9 @decorator",
		"Outer@18 class Outer:",
		"Outer.method@22     def method(self):",
		"Outer.Inner@25     class Inner:",
		"Outer.Inner.deep@26         def deep(self):",
		"Outer.after@29     # comment for after",
		"last@34 def last():",
	}
	if got := codeBlocks(t, "m.py", src); !reflect.DeepEqual(got, want) {
		t.Errorf("python\n%q\nwant\n%q", got, want)
	}
}

func TestCode_OtherLanguagesKeepPlainSplit(t *testing.T) {
	got := codeBlocks(t, "s.sh", "#!/bin/sh\necho a\n\nf() {\n  echo b\n}\n")
	want := []string{"@0 #!/bin/sh", "@0 f() {"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks %q, want %q", got, want)
	}
}
