"""Symbol resolution per language: the line range a `path::Symbol` anchor names."""
import pytest

from stele.anchors.symbols import find, language, python_definitions
from tests.factfiles import AUTH_PY

PY = AUTH_PY + '''
@decorated
@twice
def wrapped():
    pass


try:
    import fast as impl
except ImportError:
    FALLBACK = True
'''


@pytest.mark.parametrize("symbol, span", [
    ("LIMIT", (3, 3)), ("RateLimiter", (6, 16)), ("RateLimiter.check", (10, 13)),
    ("RateLimiter.__init__", (7, 8)), ("login", (19, 20)), ("wrapped", (22, 25)), ("FALLBACK", (31, 31)),
    ("RateLimiter.nope", None), ("check", None), ("time", None),
])
def test_python_resolves_with_ast_including_decorators_and_constants(symbol, span):
    assert find(PY, symbol, "src/auth.py") == span


def test_python_with_a_syntax_error_falls_back_to_indentation():
    broken = "class A:\n    def m(self):\n        return (\n\n    def n(self):\n        pass\n"
    assert python_definitions(broken) is None
    assert find(broken, "A.m", "x.py") == (2, 3)
    assert find(broken, "A.n", "x.py") == (5, 6)


TS = '''\
import x from "y";

export const LIMIT = 10;
export const handler = async (req: Req): Promise<Res> => {
  const s = "}{";
  return s;
};

export interface Opts {
  a: string;
}

export class RateLimiter<T> extends Base {
  private window = 5;
  constructor(a: number) {
    super();
  }
  async check(key: string): Promise<boolean> {
    if (key) { check(1); }
    // }
    return `${key}}`.length > 0;
  }
  other() { return 1 }
}

function top(a = {b: 1}) {
  return a;
}
'''

GO = '''\
package main

const Limit = 10

type RateLimiter struct {
	window int
}

func (r *RateLimiter) Check(key string) bool {
	s := "}"
	return len(s) > 0
}

func Top() {
	r := '}'
	_ = r
}
'''

RUST = '''\
pub const LIMIT: u32 = 10;

pub struct RateLimiter<'a> {
    window: &'a str,
}

impl<'a> RateLimiter<'a> {
    pub fn new() -> Self {
        Self { window: "}" }
    }

    pub fn check(&self, key: &str) -> bool
    where
        Self: Sized,
    {
        let c = '}';
        true
    }
}

fn top() {}
'''

JAVA = '''\
package x;

public class RateLimiter extends Base {
    private static final int LIMIT = 10;

    @Override
    public boolean check(String key) throws IOException {
        char c = '}';
        return key.isEmpty();
    }

    public RateLimiter() {
        super();
    }
}
'''

RUBY = '''\
module Auth
  LIMIT = 10

  class RateLimiter
    def check(key)
      if key
        true
      end
    end

    def self.build = new
  end
end
'''


@pytest.mark.parametrize("path, text, symbol, span", [
    ("a.ts", TS, "LIMIT", (3, 3)), ("a.ts", TS, "handler", (4, 7)), ("a.ts", TS, "Opts", (9, 11)),
    ("a.ts", TS, "RateLimiter", (13, 24)), ("a.ts", TS, "RateLimiter.check", (18, 22)),
    ("a.ts", TS, "RateLimiter.constructor", (15, 17)), ("a.ts", TS, "RateLimiter.window", (14, 14)),
    ("a.ts", TS, "top", (26, 28)), ("a.ts", TS, "check", (18, 22)), ("a.ts", TS, "nope", None),
    ("a.js", TS.replace("<T>", ""), "RateLimiter.other", (23, 23)),
    ("a.go", GO, "Limit", (3, 3)), ("a.go", GO, "RateLimiter", (5, 7)),
    ("a.go", GO, "RateLimiter.Check", (9, 12)), ("a.go", GO, "Top", (14, 17)),
    ("a.go", GO, "RateLimiter.window", (6, 6)),
    ("a.rs", RUST, "LIMIT", (1, 1)), ("a.rs", RUST, "RateLimiter", (3, 5)),
    ("a.rs", RUST, "RateLimiter.new", (8, 10)),
    ("a.rs", RUST, "RateLimiter.check", (12, 18)), ("a.rs", RUST, "top", (21, 21)),
    ("A.java", JAVA, "RateLimiter", (3, 15)), ("A.java", JAVA, "RateLimiter.check", (6, 10)),
    ("A.java", JAVA, "RateLimiter.LIMIT", (4, 4)), ("A.java", JAVA, "RateLimiter.RateLimiter", (12, 14)),
    ("a.rb", RUBY, "Auth", (1, 13)), ("a.rb", RUBY, "RateLimiter.check", (5, 9)),
    ("a.rb", RUBY, "Auth.LIMIT", (2, 2)),
    ("a.rb", RUBY, "RateLimiter.build", (11, 11)), ("a.rb", RUBY, "Auth.RateLimiter.check", (5, 9)),
])
def test_definition_patterns_find_the_whole_definition(path, text, symbol, span):
    assert find(text, symbol, path) == span


def test_a_call_is_not_taken_for_a_definition():
    text = "class A {\n  run() {\n    check(1);\n  }\n}\n"
    assert find(text, "A.check", "a.ts") is None


def test_unknown_languages_fall_back_to_a_whole_word_search():
    text = "alpha\nbeta RateLimiter here\nRateLimiters\ncheck it\n"
    assert language("notes.txt") is None
    assert find(text, "RateLimiter", "notes.txt") == (2, 2)
    assert find(text, "RateLimiter.check", "notes.txt") == (4, 4)
    assert find(text, "Missing", "notes.txt") is None
