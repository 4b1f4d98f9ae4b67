// The front end's lexer, parser and file scanner (Lexer.h, PyParser.h).
#include <gtest/gtest.h>

#include "frontend/Lexer.h"
#include "frontend/PyParser.h"

using namespace tawa::frontend;

namespace {

std::string kinds(const std::vector<Token>& toks) {
  std::string s;
  for (auto& t : toks) {
    switch (t.kind) {
      case Tok::Name: s += "N(" + t.text + ")"; break;
      case Tok::Int: s += "I(" + std::to_string(t.ival) + ")"; break;
      case Tok::Float: s += "F"; break;
      case Tok::String: s += "S(" + t.text + ")"; break;
      case Tok::Op: s += t.text; break;
      case Tok::Newline: s += ";"; break;
      case Tok::Indent: s += "{"; break;
      case Tok::Dedent: s += "}"; break;
      case Tok::EndOfFile: s += "$"; break;
      case Tok::Error: s += "E"; break;
    }
    s += " ";
  }
  return s;
}

// Prints an expression tree in prefix form.
std::string show(const Expr* e) {
  if (!e) return "_";
  switch (e->kind) {
    case Expr::Kind::Name: return e->name;
    case Expr::Kind::Int: return std::to_string(e->ival);
    case Expr::Kind::Float: return "float";
    case Expr::Kind::Str: return "'" + e->sval + "'";
    case Expr::Kind::Bool: return e->ival ? "True" : "False";
    case Expr::Kind::None: return "None";
    case Expr::Kind::Attribute: return show(e->kids[0].get()) + "." + e->name;
    case Expr::Kind::Call: {
      std::string s = "call(" + show(e->kids[0].get());
      for (size_t k = 1; k < e->kids.size(); ++k) s += ", " + show(e->kids[k].get());
      for (auto& kw : e->keywords) s += ", " + kw.first + "=" + show(kw.second.get());
      return s + ")";
    }
    case Expr::Kind::Subscript: {
      std::string s = show(e->kids[0].get()) + "[";
      for (size_t k = 1; k < e->kids.size(); ++k) s += (k > 1 ? ", " : "") + show(e->kids[k].get());
      return s + "]";
    }
    case Expr::Kind::Slice: return show(e->kids[0].get()) + ":" + show(e->kids[1].get()) + ":" + show(e->kids[2].get());
    case Expr::Kind::BinOp:
    case Expr::Kind::BoolOp: {
      std::string s = "(" + e->name;
      for (auto& k : e->kids) s += " " + show(k.get());
      return s + ")";
    }
    case Expr::Kind::UnaryOp: return "(" + e->name + " " + show(e->kids[0].get()) + ")";
    case Expr::Kind::Compare: {
      std::string s = "(cmp " + show(e->kids[0].get());
      for (size_t k = 0; k < e->ops.size(); ++k) s += " " + e->ops[k] + " " + show(e->kids[k + 1].get());
      return s + ")";
    }
    case Expr::Kind::IfExp:
      return "(if " + show(e->kids[0].get()) + " " + show(e->kids[1].get()) + " " + show(e->kids[2].get()) + ")";
    case Expr::Kind::Tuple:
    case Expr::Kind::List: {
      std::string s = e->kind == Expr::Kind::Tuple ? "(tuple" : "(list";
      for (auto& k : e->kids) s += " " + show(k.get());
      return s + ")";
    }
  }
  return "?";
}

std::string exprOf(const std::string& src) {
  auto f = parseFunctionText("t.py", "def f():\n    return " + src + "\n");
  return show(f->body.at(0)->value.get());
}

}  // namespace

TEST(FrontendLexer, IndentDedentAndNewlines) {
  auto t = tokenize("def f(a):\n    x = 1\n\n    # comment\n    if x:\n        y = 2\n    z = 3\n");
  EXPECT_EQ(kinds(t),
            "N(def) N(f) ( N(a) ) : ; { N(x) = I(1) ; N(if) N(x) : ; { N(y) = I(2) ; } N(z) = I(3) ; } $ ");
}

TEST(FrontendLexer, ImplicitJoinInsideBracketsAndBackslash) {
  auto t = tokenize("x = foo(a,\n        b,\n)\ny = 1 + \\\n    2\n");
  EXPECT_EQ(kinds(t), "N(x) = N(foo) ( N(a) , N(b) , ) ; N(y) = I(1) + I(2) ; $ ");
}

TEST(FrontendLexer, Numbers) {
  auto t = tokenize("1e-5 0x1F 1_000 3.5 .5 7. 0b101 0o17 2E3");
  ASSERT_GE(t.size(), 9u);
  EXPECT_EQ(t[0].kind, Tok::Float);
  EXPECT_DOUBLE_EQ(t[0].fval, 1e-5);
  EXPECT_EQ(t[1].ival, 31);
  EXPECT_EQ(t[2].ival, 1000);
  EXPECT_DOUBLE_EQ(t[3].fval, 3.5);
  EXPECT_DOUBLE_EQ(t[4].fval, 0.5);
  EXPECT_DOUBLE_EQ(t[5].fval, 7.0);
  EXPECT_EQ(t[6].ival, 5);
  EXPECT_EQ(t[7].ival, 15);
  EXPECT_DOUBLE_EQ(t[8].fval, 2000.0);
}

TEST(FrontendLexer, StringsAndDocstrings) {
  auto t = tokenize("a = 'x\\ty'\nb = \"\"\"line1\nline2 \"quoted\" \"\"\"\nc = r'\\d' f'{x}' b'z'\n");
  EXPECT_EQ(t[2].kind, Tok::String);
  EXPECT_EQ(t[2].text, "x\ty");
  EXPECT_EQ(t[6].text, "line1\nline2 \"quoted\" ");
  EXPECT_EQ(t[10].text, "\\d");
  EXPECT_TRUE(t[11].fstring);
  EXPECT_TRUE(t[12].bytes);
  // Lines after a multi-line string keep their numbers.
  EXPECT_EQ(t[8].line, 4);
}

TEST(FrontendLexer, PositionsAreOneBased) {
  auto t = tokenize("def f():\n    return x\n");
  EXPECT_EQ(t[0].line, 1);
  EXPECT_EQ(t[0].col, 1);
  // `return` on line 2, col 5 (after the INDENT token).
  EXPECT_EQ(t[7].text, "return");
  EXPECT_EQ(t[7].line, 2);
  EXPECT_EQ(t[7].col, 5);
}

TEST(FrontendLexer, NeverThrowsOnGarbage) {
  auto t = tokenize("x = $ ? `\n  bad indent\n'unterminated\n\"\"\"never closed");
  bool sawError = false;
  for (auto& k : t) sawError = sawError || k.kind == Tok::Error;
  EXPECT_TRUE(sawError);
  EXPECT_EQ(t.back().kind, Tok::EndOfFile);
}

TEST(FrontendParser, Precedence) {
  EXPECT_EQ(exprOf("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(exprOf("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(exprOf("-a ** 2"), "(- (** a 2))");
  EXPECT_EQ(exprOf("a < b & c"), "(cmp a < (& b c))");
  EXPECT_EQ(exprOf("(a < b) & (c >= d)"), "(& (cmp a < b) (cmp c >= d))");
  EXPECT_EQ(exprOf("not a and b or c"), "(or (and (not a) b) c)");
  EXPECT_EQ(exprOf("x if c else y"), "(if c x y)");
  EXPECT_EQ(exprOf("a // b % c << 1"), "(<< (% (// a b) c) 1)");
  EXPECT_EQ(exprOf("0 <= i < n"), "(cmp 0 <= i < n)");
  EXPECT_EQ(exprOf("a is not None"), "(cmp a is not None)");
  EXPECT_EQ(exprOf("a not in (1, 2)"), "(cmp a not in (tuple 1 2))");
}

TEST(FrontendParser, TrailersSubscriptsAndCalls) {
  EXPECT_EQ(exprOf("x[:, None]"), "x[_:_:_, None]");
  EXPECT_EQ(exprOf("tl.load(p + offs, mask=m, other=0.0)"), "call(tl.load, (+ p offs), mask=m, other=float)");
  EXPECT_EQ(exprOf("x.shape[0]"), "x.shape[0]");
  EXPECT_EQ(exprOf("f(a,)"), "call(f, a)");
  EXPECT_EQ(exprOf("a.to(tl.float16).T"), "call(a.to, tl.float16).T");
  EXPECT_EQ(exprOf("[1, 2,]"), "(list 1 2)");
  EXPECT_EQ(exprOf("()"), "(tuple)");
  EXPECT_EQ(exprOf("(a,)"), "(tuple a)");
  EXPECT_EQ(exprOf("a, b"), "(tuple a b)");
  EXPECT_EQ(exprOf("'a' 'b'"), "'ab'");
}

TEST(FrontendParser, Statements) {
  auto f = parseFunctionText("t.py", R"(def k(x, y: tl.constexpr, z: tl.constexpr = 4):
    """doc"""
    a, b = 1, 2
    c: tl.constexpr = 3
    a += 1; pass
    if a:
        b = 1
    elif b:
        b = 2
    else:
        b = 3
    for i in range(0, 10, 2):
        pass
    while a < 3:
        a = a + 1
    return a, b
)");
  ASSERT_EQ(f->params.size(), 3u);
  EXPECT_FALSE(f->params[0].isConstexpr);
  EXPECT_TRUE(f->params[1].isConstexpr);
  EXPECT_TRUE(f->params[2].isConstexpr);
  ASSERT_NE(f->params[2].defaultValue, nullptr);
  ASSERT_EQ(f->body.size(), 8u);  // docstring dropped
  EXPECT_EQ(f->body[0]->kind, Stmt::Kind::Assign);
  EXPECT_EQ(f->body[1]->kind, Stmt::Kind::AnnAssign);
  EXPECT_EQ(f->body[2]->kind, Stmt::Kind::AugAssign);
  EXPECT_EQ(f->body[2]->op, "+");
  EXPECT_EQ(f->body[3]->kind, Stmt::Kind::Pass);
  EXPECT_EQ(f->body[4]->kind, Stmt::Kind::If);
  ASSERT_EQ(f->body[4]->orelse.size(), 1u);
  EXPECT_EQ(f->body[4]->orelse[0]->kind, Stmt::Kind::If);  // elif
  EXPECT_EQ(f->body[5]->kind, Stmt::Kind::For);
  EXPECT_EQ(f->body[6]->kind, Stmt::Kind::While);
  EXPECT_EQ(f->body[7]->kind, Stmt::Kind::Return);
}

TEST(FrontendParser, ErrorsAreLocated) {
  auto expectErr = [](const std::string& body, const std::string& msg, int line, int col) {
    try {
      parseFunctionText("e.py", "def f(x):\n" + body);
      ADD_FAILURE() << "no error for: " << body;
    } catch (const tawa::UserError& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
      EXPECT_EQ(e.loc.line, line) << body;
      EXPECT_EQ(e.loc.col, col) << body;
    }
  };
  expectErr("    with x:\n        pass\n", "'with' statement inside a jit function: not supported yet", 2, 5);
  expectErr("    y = lambda t: t\n", "'lambda' inside a jit function: not supported yet", 2, 9);
  expectErr("    y = [i for i in x]\n", "list comprehensions", 2, 12);
  expectErr("    y = (1 +\n", "expected an expression", 3, 1);
  expectErr("    x[0] = 1\n", "assignment to a subscript", 2, 5);
  expectErr("    y = {1: 2}\n", "dict and set literals", 2, 9);
}

TEST(FrontendScanner, FindsJitFunctionsAndSkipsEverythingElse) {
  const char* src = R"PY(
import torch, os
import triton
import triton.language as language
from triton import jit
from triton import language as tl

class Foo:
    x = {k: v for k, v in []}
    def method(self): return f"{self!r:>10}" + '''
def not_a_kernel(): pass
'''

@triton.autotune(
    configs=[triton.Config({"BLOCK": 64}, num_warps=4),
             triton.Config({"BLOCK": 128}, num_warps=8)],
    key=["n"],
)
@triton.jit
def first(x, BLOCK: language.constexpr):
    pass

@jit
def second(y):
    pass

@triton.jit(do_not_specialize=["n"])
def third(n):
    pass

@some.other.decorator
def plain(z):
    return lambda q: q ** 2

async def coro(): await x
if __name__ == "__main__":
    print(sum(x for x in range(3)), *[1, 2], **{})
)PY";
  auto f = scanSource("s.py", src);
  ASSERT_EQ(f->jit.size(), 3u);
  EXPECT_EQ(f->jit[0].name, "first");
  EXPECT_EQ(f->jit[1].name, "second");
  EXPECT_EQ(f->jit[2].name, "third");
  EXPECT_EQ(f->aliases.at("language"), "triton.language");
  EXPECT_EQ(f->aliases.at("tl"), "triton.language");
  const FunctionDef* d = parseFunction(*f, "first");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->params[1].isConstexpr);
  EXPECT_EQ(parseFunction(*f, "plain"), nullptr);
}
