#include "frontend/PyParser.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace tawa::frontend {

namespace {

// ---- scanning the file

// The dotted name at tokens[i] (`a.b.c`); advances i past it. Empty if tokens[i] is not a name.
std::string dottedName(const std::vector<Token>& t, size_t& i) {
  std::string s;
  if (t[i].kind != Tok::Name) return s;
  s = t[i++].text;
  while (t[i].isOp(".") && t[i + 1].kind == Tok::Name) {
    s += "." + t[i + 1].text;
    i += 2;
  }
  return s;
}

std::string resolve(const std::map<std::string, std::string>& aliases, const std::string& dotted) {
  auto dot = dotted.find('.');
  std::string head = dotted.substr(0, dot);
  auto it = aliases.find(head);
  if (it == aliases.end()) return dotted;
  return it->second + (dot == std::string::npos ? "" : dotted.substr(dot));
}

void skipToNewline(const std::vector<Token>& t, size_t& i) {
  while (t[i].kind != Tok::Newline && t[i].kind != Tok::EndOfFile) ++i;
}

// tawa's own spelling of Triton's modules (`import tawa`, `@tawa.jit`, `import tawa.language as tl`,
// which the Python package provides so that a kernel needs no Triton installed) names Triton's.
std::string tritonName(const std::string& mod) {
  if (mod == "tawa") return "triton";
  if (mod.rfind("tawa.", 0) == 0) return "triton" + mod.substr(4);
  return mod;
}

// Records `import triton...`, `from triton... import ...` statements starting at t[i] (every
// binding in `all`, `from m import *` in `stars`).
void scanImport(const std::vector<Token>& t, size_t i, std::map<std::string, std::string>& aliases,
                std::map<std::string, std::vector<SourceFile::Binding>>& all, std::vector<std::string>& stars,
                const std::vector<std::pair<int, int>>& where) {
  if (t[i].isName("import")) {
    ++i;
    while (true) {
      std::string written = dottedName(t, i);
      if (written.empty()) return;
      std::string mod = tritonName(written);
      if (t[i].isName("as") && t[i + 1].kind == Tok::Name) {
        aliases[t[i + 1].text] = mod;
        all[t[i + 1].text].push_back({mod, where});
        i += 2;
      } else {
        std::string head = written.substr(0, written.find('.'));
        aliases[head] = tritonName(head);
      }
      if (!t[i].isOp(",")) return;
      ++i;
    }
  }
  if (t[i].isName("from")) {
    ++i;
    // A relative import keeps its leading dots (`from ..utils import x` -> "..utils.x"), resolved
    // against the file's package where a jit function reads the name.
    std::string dots;
    for (; t[i].isOp(".") || t[i].isOp("..."); ++i) dots += t[i].text;
    std::string mod = dots + (dots.empty() || !t[i].isName("import") ? tritonName(dottedName(t, i)) : "");
    if (mod.empty() || !t[i].isName("import")) return;
    ++i;
    bool paren = t[i].isOp("(");
    if (paren) ++i;
    if (t[i].isOp("*")) {
      stars.push_back(mod);
      return;
    }
    while (t[i].kind == Tok::Name) {
      std::string name = t[i++].text;
      std::string local = name;
      if (t[i].isName("as") && t[i + 1].kind == Tok::Name) {
        local = t[i + 1].text;
        i += 2;
      }
      aliases[local] = mod + (mod.back() == '.' ? "" : ".") + name;
      // A project module that re-exports Triton (vLLM's `from vllm.triton_utils import tl, triton`):
      // the names `triton` and `tl` imported from it are Triton's own.
      if (mod.rfind("triton", 0) != 0 && (name == "triton" || name == "tl")) aliases[local] = name == "tl" ? "triton.language" : "triton";
      all[local].push_back({aliases[local], where});
      if (!t[i].isOp(",")) break;
      ++i;
    }
  }
}

// ---- the parser of the jit subset

class Parser {
 public:
  Parser(const std::vector<Token>& t, size_t at, std::shared_ptr<const std::string> path)
      : t_(t), i_(at), path_(std::move(path)) {}

  std::unique_ptr<FunctionDef> function() {
    auto f = std::make_unique<FunctionDef>();
    const Token& def = expectName("def");
    f->pos = posOf(def);
    const Token& name = peek();
    if (name.kind != Tok::Name || isKeyword(name.text)) fail(name, "expected the function's name after 'def'");
    f->name = name.text;
    ++i_;
    expectOp("(");
    bool keywordOnly = false;
    while (!peek().isOp(")")) {
      const Token& p = peek();
      // A bare `*` (keyword-only marker) or `/` (positional-only marker) is a separator, not a
      // parameter; `*args` and `**kwargs` are outside the subset.
      if ((p.isOp("*") || p.isOp("/")) && (peek(1).isOp(",") || peek(1).isOp(")"))) {
        if (p.isOp("*")) {
          if (keywordOnly) fail(p, "duplicate '*' in the parameter list");
          keywordOnly = true;
        }
        ++i_;
        if (!acceptOp(",")) break;
        continue;
      }
      if (p.isOp("*") || p.isOp("**"))
        fail(p, std::string("'") + p.text + "' parameters (variadic arguments): not supported yet",
             "spell every parameter out by name");
      if (p.kind != Tok::Name || isKeyword(p.text)) fail(p, "expected a parameter name");
      Param param;
      param.name = p.text;
      param.pos = posOf(p);
      param.keywordOnly = keywordOnly;
      ++i_;
      if (acceptOp(":")) {
        param.annotation = test();
        param.isConstexpr = isConstexprAnnotation(*param.annotation);
      }
      if (acceptOp("=")) param.defaultValue = test();
      for (auto& q : f->params)
        if (q.name == param.name) fail(p, "duplicate parameter '" + param.name + "'");
      f->params.push_back(std::move(param));
      if (!acceptOp(",")) break;
    }
    expectOp(")");
    if (acceptOp("->")) test();
    expectOp(":");
    f->body = suite();
    // Skip a docstring.
    if (!f->body.empty() && f->body.front()->kind == Stmt::Kind::Expr && f->body.front()->value->kind == Expr::Kind::Str)
      f->body.erase(f->body.begin());
    numberReads(*f);
    return f;
  }

  ExprP exprOnly() {
    checkStatementLength();
    ExprP e = testList();
    return e;
  }
  size_t pos() const { return i_; }

 private:
  // -- limits: the parser, the lowering and the AST's destructor all recurse over an expression, so
  // its nesting (parentheses, conditional expressions, unary operators, **) and its statement's
  // length are bounded; a program within Python's own limits never comes near either.
  static constexpr int kMaxNesting = 300;
  static constexpr size_t kMaxStatementTokens = 4000;
  int nesting_ = 0;
  void checkStatementLength() const {
    size_t end = i_;
    while (end < t_.size() && t_[end].kind != Tok::Newline && t_[end].kind != Tok::EndOfFile) {
      if (t_[end].kind == Tok::Error) fail(t_[end], t_[end].text);  // the tokenizer's complaint first, as Python's
      ++end;
    }
    if (end - i_ > kMaxStatementTokens)
      fail(peek(), "a statement of more than " + std::to_string(kMaxStatementTokens) + " tokens", "split it into several statements");
  }
  NestingLevel deeper(const Token& at) {
    return NestingLevel(nesting_, kMaxNesting, [&] {
      fail(at, "expression nested more than " + std::to_string(kMaxNesting) + " levels deep", "split it into several statements");
    });
  }

  // -- token helpers
  const Token& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  Pos posOf(const Token& t) const { return Pos{t.line, t.col}; }
  Location loc(const Token& t) const { return Location::at(path_, t.line, t.col); }
  [[noreturn]] void fail(const Token& t, const std::string& msg, const std::string& hint = {}) const {
    if (t.kind == Tok::Error) throw UserError(loc(t), t.text, hint);
    throw UserError(loc(t), msg, hint);
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::Newline: return "end of line";
      case Tok::Indent: return "an indented block";
      case Tok::Dedent: return "the end of the block";
      case Tok::EndOfFile: return "end of file";
      case Tok::String: return "a string";
      case Tok::Int:
      case Tok::Float: return "'" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }
  bool acceptOp(std::string_view op) {
    if (peek().isOp(op)) {
      ++i_;
      return true;
    }
    return false;
  }
  bool acceptName(std::string_view n) {
    if (peek().isName(n)) {
      ++i_;
      return true;
    }
    return false;
  }
  const Token& expectOp(std::string_view op) {
    if (!peek().isOp(op)) fail(peek(), "expected '" + std::string(op) + "' but found " + describe(peek()));
    return t_[i_++];
  }
  const Token& expectName(std::string_view n) {
    if (!peek().isName(n)) fail(peek(), "expected '" + std::string(n) + "' but found " + describe(peek()));
    return t_[i_++];
  }
  void expectNewline() {
    if (peek().kind == Tok::EndOfFile || peek().kind == Tok::Dedent) return;
    if (peek().kind != Tok::Newline) fail(peek(), "expected end of line but found " + describe(peek()));
    ++i_;
  }

  static bool isConstexprAnnotation(const Expr& e) {
    if (e.kind == Expr::Kind::Attribute) return e.name == "constexpr";
    if (e.kind == Expr::Kind::Name) return e.name == "constexpr";
    if (e.kind == Expr::Kind::Str) return e.sval == "tl.constexpr" || e.sval == "constexpr";
    return false;
  }

  // -- statements
  Body suite() {
    Body b;
    if (peek().kind != Tok::Newline) {  // `if x: y = 1` on one line
      simpleStatements(b);
      return b;
    }
    ++i_;
    if (peek().kind != Tok::Indent) fail(peek(), "expected an indented block");
    ++i_;
    while (peek().kind != Tok::Dedent && peek().kind != Tok::EndOfFile) statement(b);
    if (peek().kind == Tok::Dedent) ++i_;
    return b;
  }

  void statement(Body& b) {
    const Token& t = peek();
    checkStatementLength();
    if (t.kind == Tok::Error) fail(t, t.text);
    if (t.kind == Tok::Indent) fail(t, "unexpected indent");
    if (t.kind == Tok::Name) {
      if (t.text == "if") {
        b.push_back(ifStatement());
        return;
      }
      if (t.text == "for") {
        ++i_;
        auto s = std::make_unique<Stmt>(Stmt::Kind::For, posOf(t));
        s->targets.push_back(targetList());
        expectName("in");
        s->value = testList();
        expectOp(":");
        s->body = suite();
        if (peek().isName("else")) fail(peek(), "'for ... else': not supported yet");
        b.push_back(std::move(s));
        return;
      }
      if (t.text == "while") {
        ++i_;
        auto s = std::make_unique<Stmt>(Stmt::Kind::While, posOf(t));
        s->test = test();
        expectOp(":");
        s->body = suite();
        if (peek().isName("else")) fail(peek(), "'while ... else': not supported yet");
        b.push_back(std::move(s));
        return;
      }
      static const char* unsupported[] = {"def", "class", "with", "try", "async", "lambda", "global", "nonlocal",
                                          "del", "import", "from", "yield", "break", "continue",
                                          "await", "except", "finally"};
      for (const char* u : unsupported)
        if (t.text == u) {
          std::string hint;
          if (t.text == "def") hint = "define the helper at module level with @triton.jit and call it";
          if (t.text == "break" || t.text == "continue") hint = "use a while loop with a condition, as Triton requires";
          fail(t, std::string("'") + u + "' statement inside a jit function: not supported yet", hint);
        }
      if (t.text == "elif" || t.text == "else") fail(t, "'" + t.text + "' without a matching 'if'");
    }
    if (t.isOp("@")) fail(t, "decorators inside a jit function: not supported yet");
    simpleStatements(b);
  }

  StmtP ifStatement() {
    const Token& t = t_[i_++];  // if / elif
    auto s = std::make_unique<Stmt>(Stmt::Kind::If, posOf(t));
    s->test = test();
    expectOp(":");
    s->body = suite();
    if (peek().isName("elif")) {
      s->orelse.push_back(ifStatement());
    } else if (peek().isName("else")) {
      ++i_;
      expectOp(":");
      s->orelse = suite();
    }
    return s;
  }

  void simpleStatements(Body& b) {
    while (true) {
      b.push_back(simpleStatement());
      if (!acceptOp(";")) break;
      if (peek().kind == Tok::Newline) break;
    }
    expectNewline();
  }

  StmtP simpleStatement() {
    const Token& t = peek();
    if (t.isName("pass")) {
      ++i_;
      return std::make_unique<Stmt>(Stmt::Kind::Pass, posOf(t));
    }
    if (t.isName("return")) {
      ++i_;
      auto s = std::make_unique<Stmt>(Stmt::Kind::Return, posOf(t));
      if (peek().kind != Tok::Newline && !peek().isOp(";") && peek().kind != Tok::Dedent &&
          peek().kind != Tok::EndOfFile)
        s->value = testList();
      return s;
    }
    if (t.isName("assert")) {
      ++i_;
      auto s = std::make_unique<Stmt>(Stmt::Kind::Assert, posOf(t));
      s->test = test();
      if (acceptOp(",")) s->value = test();
      return s;
    }
    if (t.isName("raise")) {  // read, and refused only where it is reached (a constexpr branch may rule it out)
      ++i_;
      auto s = std::make_unique<Stmt>(Stmt::Kind::Raise, posOf(t));
      if (peek().kind != Tok::Newline && !peek().isOp(";") && peek().kind != Tok::Dedent && peek().kind != Tok::EndOfFile) {
        s->value = test();
        if (peek().isName("from")) ++i_, s->test = test();
      }
      return s;
    }
    static const char* unsupported[] = {"global", "nonlocal", "del", "import", "from", "yield",
                                        "break", "continue", "def", "class", "with", "try"};
    if (t.kind == Tok::Name)
      for (const char* u : unsupported)
        if (t.text == u) fail(t, std::string("'") + u + "' statement inside a jit function: not supported yet");
    ExprP first = testList(true);
    if (peek().isOp(":")) {  // annotated assignment
      ++i_;
      auto s = std::make_unique<Stmt>(Stmt::Kind::AnnAssign, first->pos);
      checkTarget(*first);
      if (first->kind != Expr::Kind::Name) fail(t, "annotated assignment needs a plain name as its target");
      s->targets.push_back(std::move(first));
      s->annotation = test();
      if (acceptOp("=")) s->value = testList();
      return s;
    }
    static const char* aug[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", "@="};
    for (const char* a : aug)
      if (peek().isOp(a)) {
        const Token& opTok = t_[i_++];
        auto s = std::make_unique<Stmt>(Stmt::Kind::AugAssign, posOf(opTok));
        checkTarget(*first);
        if (first->kind != Expr::Kind::Name) fail(t, "augmented assignment needs a plain name as its target");
        s->op = std::string(a).substr(0, std::string(a).size() - 1);
        s->targets.push_back(std::move(first));
        s->value = testList();
        return s;
      }
    if (peek().isOp("=")) {
      auto s = std::make_unique<Stmt>(Stmt::Kind::Assign, first->pos);
      std::vector<ExprP> chain;
      chain.push_back(std::move(first));
      while (acceptOp("=")) chain.push_back(testList(true));
      s->value = std::move(chain.back());
      chain.pop_back();
      for (auto& c : chain) checkTarget(*c);
      s->targets = std::move(chain);
      return s;
    }
    auto s = std::make_unique<Stmt>(Stmt::Kind::Expr, first->pos);
    s->value = std::move(first);
    return s;
  }

  void checkTarget(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Name: return;
      case Expr::Kind::Tuple:
      case Expr::Kind::List:
        for (auto& k : e.kids) checkTarget(*k);
        return;
      case Expr::Kind::Subscript:
        throw UserError(Location::at(path_, e.pos.line, e.pos.col),
                        "assignment to a subscript: not supported yet (tiles are immutable values)",
                        "build the new tile with tl.where or arithmetic");
      case Expr::Kind::Attribute:
        throw UserError(Location::at(path_, e.pos.line, e.pos.col), "assignment to an attribute: not supported yet");
      default:
        throw UserError(Location::at(path_, e.pos.line, e.pos.col), "cannot assign to this expression");
    }
  }

  ExprP targetList() {
    // A for-loop target: names separated by commas, possibly parenthesized.
    ExprP first = orExpr();
    if (!peek().isOp(",")) {
      checkTarget(*first);
      return first;
    }
    auto tup = std::make_unique<Expr>(Expr::Kind::Tuple, first->pos);
    tup->kids.push_back(std::move(first));
    while (acceptOp(",")) {
      if (peek().isName("in")) break;
      tup->kids.push_back(orExpr());
    }
    checkTarget(*tup);
    return tup;
  }

  // -- expressions
  // testlist: test (',' test)* [','] -- a bare tuple when there is a comma.
  ExprP testList(bool allowStar = false) {
    ExprP first = test();
    if (!peek().isOp(",")) return first;
    auto tup = std::make_unique<Expr>(Expr::Kind::Tuple, first->pos);
    tup->kids.push_back(std::move(first));
    while (acceptOp(",")) {
      const Token& n = peek();
      if (n.kind == Tok::Newline || n.isOp("=") || n.isOp(")") || n.isOp(";") || n.isOp(":") ||
          n.kind == Tok::EndOfFile || n.kind == Tok::Dedent)
        break;
      tup->kids.push_back(test());
    }
    return tup;
  }

  ExprP test() {
    const Token& t = peek();
    auto level = deeper(t);
    if (t.isName("lambda")) fail(t, "'lambda' inside a jit function: not supported yet", "define a @triton.jit helper instead");
    if (t.isName("yield") || t.isName("await")) fail(t, "'" + t.text + "' expression: not supported yet");
    ExprP e = orTest();
    if (peek().isName("if")) {
      const Token& ifTok = t_[i_++];
      auto x = std::make_unique<Expr>(Expr::Kind::IfExp, posOf(ifTok));
      ExprP cond = orTest();
      expectName("else");
      ExprP other = test();
      x->kids.push_back(std::move(cond));
      x->kids.push_back(std::move(e));
      x->kids.push_back(std::move(other));
      return x;
    }
    if (peek().isOp(":=")) fail(peek(), "assignment expression ':=': not supported yet");
    return e;
  }

  ExprP boolChain(const char* op, ExprP (Parser::*sub)()) {
    ExprP e = (this->*sub)();
    if (!peek().isName(op)) return e;
    auto b = std::make_unique<Expr>(Expr::Kind::BoolOp, posOf(peek()));
    b->name = op;
    b->kids.push_back(std::move(e));
    while (acceptName(op)) b->kids.push_back((this->*sub)());
    return b;
  }
  ExprP orTest() { return boolChain("or", &Parser::andTest); }
  ExprP andTest() { return boolChain("and", &Parser::notTest); }
  ExprP notTest() {
    if (peek().isName("not")) {
      auto level = deeper(peek());
      const Token& t = t_[i_++];
      auto u = std::make_unique<Expr>(Expr::Kind::UnaryOp, posOf(t));
      u->name = "not";
      u->kids.push_back(notTest());
      return u;
    }
    return comparison();
  }
  ExprP comparison() {
    ExprP e = orExpr();
    std::unique_ptr<Expr> c;
    while (true) {
      const Token& t = peek();
      std::string op;
      if (t.kind == Tok::Op && (t.text == "<" || t.text == ">" || t.text == "==" || t.text == ">=" ||
                                t.text == "<=" || t.text == "!=")) {
        op = t.text;
        ++i_;
      } else if (t.isName("in")) {
        op = "in";
        ++i_;
      } else if (t.isName("not") && peek(1).isName("in")) {
        op = "not in";
        i_ += 2;
      } else if (t.isName("is")) {
        ++i_;
        op = acceptName("not") ? "is not" : "is";
      } else {
        break;
      }
      if (!c) {
        c = std::make_unique<Expr>(Expr::Kind::Compare, posOf(t));
        c->kids.push_back(std::move(e));
      }
      c->ops.push_back(op);
      c->kids.push_back(orExpr());
    }
    return c ? std::move(c) : std::move(e);
  }

  ExprP binary(std::initializer_list<const char*> ops, ExprP (Parser::*sub)()) {
    ExprP e = (this->*sub)();
    while (true) {
      const Token& t = peek();
      const char* hit = nullptr;
      if (t.kind == Tok::Op)
        for (const char* o : ops)
          if (t.text == o) hit = o;
      if (!hit) return e;
      ++i_;
      auto b = std::make_unique<Expr>(Expr::Kind::BinOp, posOf(t));
      b->name = hit;
      b->kids.push_back(std::move(e));
      b->kids.push_back((this->*sub)());
      e = std::move(b);
    }
  }
  ExprP orExpr() { return binary({"|"}, &Parser::xorExpr); }
  ExprP xorExpr() { return binary({"^"}, &Parser::andExpr); }
  ExprP andExpr() { return binary({"&"}, &Parser::shiftExpr); }
  ExprP shiftExpr() { return binary({"<<", ">>"}, &Parser::arithExpr); }
  ExprP arithExpr() { return binary({"+", "-"}, &Parser::term); }
  ExprP term() { return binary({"*", "/", "//", "%", "@"}, &Parser::factor); }
  ExprP factor() {
    const Token& t = peek();
    if (t.isOp("-") || t.isOp("+") || t.isOp("~")) {
      auto level = deeper(t);
      ++i_;
      auto u = std::make_unique<Expr>(Expr::Kind::UnaryOp, posOf(t));
      u->name = t.text;
      u->kids.push_back(factor());
      return u;
    }
    return power();
  }
  ExprP power() {
    ExprP e = primary();
    if (peek().isOp("**")) {
      auto level = deeper(peek());
      const Token& t = t_[i_++];
      auto b = std::make_unique<Expr>(Expr::Kind::BinOp, posOf(t));
      b->name = "**";
      b->kids.push_back(std::move(e));
      b->kids.push_back(factor());
      return b;
    }
    return e;
  }

  ExprP primary() {
    ExprP e = atom();
    while (true) {
      const Token& t = peek();
      if (t.isOp(".")) {
        ++i_;
        const Token& n = peek();
        if (n.kind != Tok::Name) fail(n, "expected an attribute name after '.'");
        ++i_;
        auto a = std::make_unique<Expr>(Expr::Kind::Attribute, posOf(n));
        a->pos = e->pos;
        a->name = n.text;
        a->kids.push_back(std::move(e));
        e = std::move(a);
      } else if (t.isOp("(")) {
        ++i_;
        auto c = std::make_unique<Expr>(Expr::Kind::Call, e->pos);
        c->kids.push_back(std::move(e));
        while (!peek().isOp(")")) {
          const Token& a = peek();
          if (a.isOp("*") || a.isOp("**"))
            fail(a, std::string("'") + a.text + "' unpacking in a call: not supported yet");
          if (a.kind == Tok::Name && peek(1).isOp("=") && !isKeyword(a.text)) {
            i_ += 2;
            for (auto& kw : c->keywords)
              if (kw.first == a.text) fail(a, "keyword argument '" + a.text + "' repeated");
            c->keywords.emplace_back(a.text, test());
          } else {
            if (!c->keywords.empty()) fail(a, "positional argument after keyword arguments");
            c->kids.push_back(test());
            if (peek().isName("for")) fail(peek(), "generator expressions: not supported yet");
          }
          if (!acceptOp(",")) break;
        }
        expectOp(")");
        e = std::move(c);
      } else if (t.isOp("[")) {
        ++i_;
        auto s = std::make_unique<Expr>(Expr::Kind::Subscript, e->pos);
        s->kids.push_back(std::move(e));
        while (!peek().isOp("]")) {
          s->kids.push_back(subscriptItem());
          if (!acceptOp(",")) break;
        }
        if (s->kids.size() == 1) fail(peek(), "empty subscript");
        expectOp("]");
        e = std::move(s);
      } else {
        return e;
      }
    }
  }

  ExprP subscriptItem() {
    const Token& t = peek();
    ExprP lo;
    if (!t.isOp(":")) {
      lo = test();
      if (!peek().isOp(":")) return lo;
    }
    auto sl = std::make_unique<Expr>(Expr::Kind::Slice, posOf(t));
    expectOp(":");
    ExprP hi, step;
    if (!peek().isOp(":") && !peek().isOp(",") && !peek().isOp("]")) hi = test();
    if (acceptOp(":"))
      if (!peek().isOp(",") && !peek().isOp("]")) step = test();
    sl->kids.push_back(std::move(lo));
    sl->kids.push_back(std::move(hi));
    sl->kids.push_back(std::move(step));
    return sl;
  }

  ExprP atom() {
    const Token& t = peek();
    Pos p = posOf(t);
    switch (t.kind) {
      case Tok::Error: fail(t, t.text);
      case Tok::Int: {
        ++i_;
        auto e = std::make_unique<Expr>(Expr::Kind::Int, p);
        e->ival = t.ival;
        return e;
      }
      case Tok::Float: {
        ++i_;
        auto e = std::make_unique<Expr>(Expr::Kind::Float, p);
        e->fval = t.fval;
        return e;
      }
      case Tok::String: {
        auto e = std::make_unique<Expr>(Expr::Kind::Str, p);
        while (peek().kind == Tok::String) {
          const Token& s = t_[i_++];
          if (s.fstring) fail(s, "f-strings inside a jit function: not supported yet", "use a plain string");
          if (s.bytes) fail(s, "bytes literals inside a jit function: not supported yet");
          e->sval += s.text;
        }
        return e;
      }
      case Tok::Name: {
        if (t.text == "True" || t.text == "False") {
          ++i_;
          auto e = std::make_unique<Expr>(Expr::Kind::Bool, p);
          e->ival = t.text == "True";
          return e;
        }
        if (t.text == "None") {
          ++i_;
          return std::make_unique<Expr>(Expr::Kind::None, p);
        }
        if (t.text == "lambda") fail(t, "'lambda' inside a jit function: not supported yet", "define a @triton.jit helper instead");
        if (isKeyword(t.text)) fail(t, "unexpected keyword '" + t.text + "'");
        ++i_;
        auto e = std::make_unique<Expr>(Expr::Kind::Name, p);
        e->name = t.text;
        return e;
      }
      case Tok::Op: {
        if (t.text == "(") {
          ++i_;
          if (acceptOp(")")) return std::make_unique<Expr>(Expr::Kind::Tuple, p);
          ExprP first = test();
          if (peek().isName("for")) fail(peek(), "generator expressions inside a jit function: not supported yet");
          if (acceptOp(")")) return first;  // parenthesized expression
          auto tup = std::make_unique<Expr>(Expr::Kind::Tuple, p);
          tup->kids.push_back(std::move(first));
          while (acceptOp(",")) {
            if (peek().isOp(")")) break;
            tup->kids.push_back(test());
          }
          expectOp(")");
          return tup;
        }
        if (t.text == "[") {
          ++i_;
          auto l = std::make_unique<Expr>(Expr::Kind::List, p);
          while (!peek().isOp("]")) {
            l->kids.push_back(test());
            if (peek().isName("for"))
              fail(peek(), "list comprehensions inside a jit function: not supported yet",
                   "write the list out or use tl.static_range");
            if (!acceptOp(",")) break;
          }
          expectOp("]");
          return l;
        }
        if (t.text == "{") fail(t, "dict and set literals inside a jit function: not supported yet");
        if (t.text == "...") fail(t, "'...' (Ellipsis): not supported yet");
        if (t.text == "*") fail(t, "starred expressions: not supported yet");
        fail(t, "expected an expression but found '" + t.text + "'");
      }
      case Tok::Newline:
      case Tok::Indent:
      case Tok::Dedent:
      case Tok::EndOfFile: fail(t, "expected an expression but found " + describe(t));
    }
    fail(t, "expected an expression");
  }

  // -- liveness numbering
  void numberReads(FunctionDef& f) {
    int n = 0;
    std::function<void(Expr*)> ex = [&](Expr* e) {
      if (!e) return;
      if (e->kind == Expr::Kind::Name) {
        e->readIndex = n;
        f.reads[e->name].push_back(n++);
      }
      for (auto& k : e->kids) ex(k.get());
      for (auto& kw : e->keywords) ex(kw.second.get());
    };
    std::function<void(Body&)> body;
    std::function<void(Stmt&)> st = [&](Stmt& s) {
      s.readBegin = n;
      ex(s.test.get());
      ex(s.value.get());
      if (s.kind == Stmt::Kind::AugAssign) ex(s.targets[0].get());
      body(s.body);
      body(s.orelse);
      s.readEnd = n;
    };
    body = [&](Body& b) {
      for (auto& s : b) st(*s);
    };
    body(f.body);
    f.numReads = n;
  }

  const std::vector<Token>& t_;
  size_t i_;
  std::shared_ptr<const std::string> path_;
};

bool isJitDecorator(const std::map<std::string, std::string>& aliases, const std::vector<Token>& t, size_t i) {
  std::string d = dottedName(t, i);
  if (d.empty()) return false;
  std::string r = resolve(aliases, d);
  return r == "triton.jit" || r == "triton.runtime.jit" || r == "triton.runtime.jit.jit" ||
         r == "triton.runtime.jit.JITFunction";
}

// `@tl.constexpr` on a plain function (FlagGems' `get_scan_accum_type`): Triton calls it at compile
// time on constexpr arguments, so it is read as a jit function whose result must be a constant.
bool isConstexprDecorator(const std::map<std::string, std::string>& aliases, const std::vector<Token>& t, size_t i) {
  std::string d = dottedName(t, i);
  if (d.empty() || t[i].isOp("(")) return false;  // (dottedName moved i past the name)
  std::string r = resolve(aliases, d);
  return r == "triton.language.constexpr" || r == "triton.language.core.constexpr";
}

}  // namespace

const SourceFile::Jit* SourceFile::find(const std::string& name) const {
  for (auto& j : jit)
    if (j.name == name) return &j;
  return nullptr;
}

std::unique_ptr<SourceFile> scanSource(const std::string& path, const std::string& text) {
  auto f = std::make_unique<SourceFile>();
  f->path = std::make_shared<const std::string>(path);
  f->tokens = tokenize(text);
  const auto& t = f->tokens;
  f->aliases["triton"] = "triton";
  f->aliases["tl"] = "triton.language";
  // First pass: imports anywhere at a statement start; second: decorated defs and globals.
  auto atStatementStart = [&](size_t i) {
    return i == 0 || t[i - 1].kind == Tok::Newline || t[i - 1].kind == Tok::Indent || t[i - 1].kind == Tok::Dedent;
  };
  // The module-level if/try branches each statement lies in (statements inside defs and classes have
  // none recorded: their imports are bound as before, with no branch).
  std::map<size_t, std::vector<std::pair<int, int>>> where;
  {
    int d = 0, inDef = -1;
    struct Open {
      int id, depth, branch;
    };
    std::vector<Open> open;
    for (size_t i = 0; i < t.size() && t[i].kind != Tok::EndOfFile; ++i) {
      if (t[i].kind == Tok::Indent) ++d;
      if (t[i].kind == Tok::Dedent) --d;
      if (!atStatementStart(i) || t[i].kind == Tok::Indent || t[i].kind == Tok::Dedent) continue;
      if (inDef >= 0 && d <= inDef) inDef = -1;
      if (inDef >= 0) continue;
      while (!open.empty() && open.back().depth > d) open.pop_back();
      const bool cont = t[i].isName("elif") || t[i].isName("else") || t[i].isName("except") || t[i].isName("finally");
      if (!open.empty() && open.back().depth == d) {
        if (cont) {
          auto& br = f->ifs[static_cast<size_t>(open.back().id)];
          const bool isTry = br.front() == SourceFile::kTry;
          br.push_back(isTry ? SourceFile::kTry : t[i].isName("elif") ? i + 1 : SourceFile::kElse);
          open.back().branch = static_cast<int>(br.size()) - 1;
          continue;
        }
        open.pop_back();
      }
      if (t[i].isName("if") || t[i].isName("try")) {
        f->ifs.push_back({t[i].isName("if") ? i + 1 : SourceFile::kTry});
        open.push_back({static_cast<int>(f->ifs.size()) - 1, d, 0});
        continue;
      }
      if (t[i].isName("def") || t[i].isName("class")) inDef = d;
      auto& w = where[i];
      for (auto& o : open) w.emplace_back(o.id, o.branch);
    }
  }
  auto context = [&](size_t i) {
    auto it = where.find(i);
    return it == where.end() ? std::vector<std::pair<int, int>>{} : it->second;
  };
  std::map<std::string, std::vector<SourceFile::Binding>> inDefs;  // imports inside functions: aliases only
  for (size_t i = 0; i < t.size(); ++i)
    if (atStatementStart(i) && (t[i].isName("import") || t[i].isName("from")))
      scanImport(t, i, f->aliases, where.count(i) ? f->bindings : inDefs, f->starImports, context(i));
  int depth = 0;  // indentation depth, to tell module-level statements apart
  std::vector<size_t> decorators;
  std::map<std::string, size_t> plainDefs;  // undecorated module-level defs (for `f = triton.jit(f)`)
  for (size_t i = 0; i < t.size() && t[i].kind != Tok::EndOfFile; ++i) {
    if (t[i].kind == Tok::Indent) ++depth;
    if (t[i].kind == Tok::Dedent) --depth;
    if (!atStatementStart(i) || t[i].kind == Tok::Indent || t[i].kind == Tok::Dedent) continue;
    const bool moduleLevel = where.count(i) != 0;  // outside every def and class (any if/try branch)
    if (moduleLevel && t[i].isName("def") && t[i + 1].kind == Tok::Name && decorators.empty()) plainDefs[t[i + 1].text] = i;
    if (moduleLevel && t[i].kind == Tok::Name && !isKeyword(t[i].text) && t[i + 1].isOp("=")) {
      auto [at, fresh] = f->assigned.emplace(t[i].text, i + 2);
      if (!fresh || !context(i).empty()) at->second = std::string::npos;  // bound twice, or in a branch: not read
      // Module-level (any if/try branch) `NAME = dotted.name`: an alias (`exp = tl.exp`); and the
      // call forms of the decorators: `f = triton.jit(f)`, `f = triton.heuristics({...})(f)`.
      size_t m = i + 2;
      std::string rhs = dottedName(t, m);
      if (!rhs.empty() && (t[m].kind == Tok::Newline || t[m].kind == Tok::EndOfFile) && rhs != t[i].text) {
        f->bindings[t[i].text].push_back({resolve(f->aliases, rhs), context(i)});
      } else if (!rhs.empty() && t[m].isOp("(")) {
        const std::string r = resolve(f->aliases, rhs);
        const bool jitCall = r == "triton.jit" || r == "triton.runtime.jit" || r == "triton.runtime.jit.jit";
        auto def = t[m + 1].kind == Tok::Name ? plainDefs.find(t[m + 1].text) : plainDefs.end();
        if (jitCall && t[m + 2].isOp(")") && def != plainDefs.end() && !f->find(t[i].text)) {
          SourceFile::Jit j;
          j.name = t[i].text;
          j.defToken = def->second;
          j.pos = Pos{t[def->second].line, t[def->second].col};
          f->jit.push_back(std::move(j));
        }
      }
    }
    if (t[i].isOp("@")) {
      decorators.push_back(i + 1);
      skipToNewline(t, i);
      continue;
    }
    if (t[i].isName("def") && t[i + 1].kind == Tok::Name) {
      bool jit = false, constexprFn = false;
      for (size_t d : decorators) {
        jit = jit || isJitDecorator(f->aliases, t, d);
        constexprFn = constexprFn || isConstexprDecorator(f->aliases, t, d);
      }
      if (jit || constexprFn) {  // a later definition of the same name replaces the earlier one, as in Python
        SourceFile::Jit j;
        j.constexprFn = constexprFn && !jit;
        j.name = t[i + 1].text;
        j.defToken = i;
        j.pos = Pos{t[i].line, t[i].col};
        j.decorators = decorators;
        j.branches = context(i);
        // Both outside every if/try branch: the later one replaces it. Otherwise both are kept, the
        // lowering picks one by the branches' conditions (`if version >= 3: def f ... else: def f`).
        auto same = std::find_if(f->jit.begin(), f->jit.end(), [&](auto& x) { return x.name == j.name; });
        if (same != f->jit.end() && same->branches.empty() && j.branches.empty()) *same = std::move(j);
        else f->jit.push_back(std::move(j));
      }
    }
    if (depth == 0 && t[i].kind == Tok::Name && !isKeyword(t[i].text)) {
      // NAME = tl.constexpr(...) and NAME: tl.constexpr = tl.constexpr(...) (the value is a constexpr
      // object, which Triton lets a jit function read); NAME: tl.constexpr = v with any other value
      // is recorded to be refused where it is read (Python keeps v, a plain value, and so does Triton).
      size_t k = i + 1;
      if (t[k].isOp("=")) {
        size_t m = k + 1;
        std::string callee = dottedName(t, m);
        if (!callee.empty() && t[m].isOp("(") && resolve(f->aliases, callee) == "triton.language.constexpr")
          f->globals[t[i].text] = i, f->annotatedGlobals.erase(t[i].text);
      } else if (t[k].isOp(":")) {
        size_t m = k + 1;
        std::string ann = dottedName(t, m);
        if (!ann.empty() && resolve(f->aliases, ann) == "triton.language.constexpr" && t[m].isOp("=")) {
          size_t v = m + 1;
          std::string callee = dottedName(t, v);
          if (!callee.empty() && t[v].isOp("(") && resolve(f->aliases, callee) == "triton.language.constexpr")
            f->globals[t[i].text] = i, f->annotatedGlobals.erase(t[i].text);
          else
            f->annotatedGlobals[t[i].text] = i, f->globals.erase(t[i].text);
        }
      }
    }
    decorators.clear();
  }
  return f;
}

DecoratorSays decoratorSays(const SourceFile& file, const SourceFile::Jit& jit, const std::string& name) {
  using K = DecoratorSays::Kind;
  const auto& t = file.tokens;
  for (size_t d : jit.decorators) {
    size_t i = d;
    const std::string callee = resolve(file.aliases, dottedName(t, i));
    if (!t[i].isOp("(")) continue;
    size_t end = i, depth = 0;  // the decorator's closing parenthesis
    for (; t[end].kind != Tok::EndOfFile; ++end) {
      if (t[end].isOp("(") || t[end].isOp("[") || t[end].isOp("{")) ++depth;
      if (t[end].isOp(")") || t[end].isOp("]") || t[end].isOp("}"))
        if (--depth == 0) break;
    }
    DecoratorSays says;
    says.decorator = callee;
    says.line = t[d].line;
    if (callee == "triton.heuristics") {
      for (size_t k = i; k + 10 < end; ++k) {
        if (!(t[k].kind == Tok::String && t[k].text == name && t[k + 1].isOp(":") && t[k + 2].isName("lambda"))) continue;
        // lambda ARGS: ARGS['x'] is [not] None
        const size_t m = k + 3;
        const std::string args = t[m].kind == Tok::Name ? t[m].text : "";
        if (args.empty() || !t[m + 1].isOp(":") || !t[m + 2].isName(args) || !t[m + 3].isOp("[") || t[m + 4].kind != Tok::String ||
            !t[m + 5].isOp("]") || !t[m + 6].isName("is")) {
          says.kind = K::Unread;
          return says;
        }
        says.negate = t[m + 7].isName("not");
        if (!t[m + 7 + says.negate].isName("None")) break;
        says.kind = K::IsNone;
        says.arg = t[m + 4].text;
        return says;
      }
    }
    if (callee == "triton.autotune") {
      for (size_t k = i; k + 3 < end; ++k) {
        if (!(t[k].isName("Config") && t[k + 1].isOp("(") && t[k + 2].isOp("{"))) continue;
        says.kind = K::Unread;  // unless the first config gives a literal
        for (size_t m = k + 3; m + 2 < end && !t[m].isOp("}"); ++m)
          if (t[m].kind == Tok::String && t[m].text == name && t[m + 1].isOp(":")) {
            const Token& lit = t[m + 2];
            if (lit.kind == Tok::Int || lit.kind == Tok::Float || lit.isName("True") || lit.isName("False"))
              says.kind = K::Literal, says.literal = &lit;
            break;
          }
        return says;
      }
    }
  }
  return {};
}

namespace {
// Compares Triton's version (3.6.0 here) with "X.Y.Z" by a comparison operator's spelling.
std::optional<bool> compareTritonVersion(const std::string& op, const std::string& want, bool tritonOnLeft) {
  int w[3] = {0, 0, 0};
  std::sscanf(want.c_str(), "%d.%d.%d", &w[0], &w[1], &w[2]);
  const int have[3] = {3, 6, 0};
  int c = std::lexicographical_compare(have, have + 3, w, w + 3) ? -1 : std::equal(have, have + 3, w) ? 0 : 1;
  if (!tritonOnLeft) c = -c;
  if (op == ">=" || op == "operator.ge") return c >= 0;
  if (op == ">" || op == "operator.gt") return c > 0;
  if (op == "<=" || op == "operator.le") return c <= 0;
  if (op == "<" || op == "operator.lt") return c < 0;
  if (op == "==" || op == "operator.eq") return c == 0;
  if (op == "!=" || op == "operator.ne") return c != 0;
  return std::nullopt;
}
}  // namespace

std::optional<bool> moduleCondition(const SourceFile& file, size_t at) {
  const auto& t = file.tokens;
  size_t i = at;
  bool negate = false;
  while (t[i].isName("not")) negate = !negate, ++i;
  // An `if` condition ends at its ':', a module-level assignment's value (read through its name) at
  // the end of the line.
  auto done = [&](bool v) -> std::optional<bool> {
    if (!t[i].isOp(":") && t[i].kind != Tok::Newline && t[i].kind != Tok::EndOfFile) return std::nullopt;  // more follows
    return negate ? !v : v;
  };
  // NAME bound once at module level to a condition read here (`TRITON3 = version.parse(...) >= ...`),
  // followed through at most a few names (`A = B` and `B = A` would not end).
  static thread_local int through = 0;
  if (t[i].kind == Tok::Name && (t[i + 1].isOp(":") || t[i + 1].kind == Tok::Newline) && through < 8) {
    auto a = file.assigned.find(t[i].text);
    if (a != file.assigned.end() && a->second != std::string::npos && a->second != at) {
      ++through;
      std::optional<bool> v = moduleCondition(file, a->second);
      --through;
      if (!v) return std::nullopt;
      ++i;
      return done(*v);
    }
  }
  // packaging's version of Triton against a literal one: `version.parse(triton.__version__) >=
  // version.parse("3.0.0")` (or Version(...), either side).
  {
    auto versionOf = [&](size_t& k, bool& isTriton, std::string& literal) {
      size_t m = k;
      const std::string fn = resolve(file.aliases, dottedName(t, m));
      const bool parse = fn == "packaging.version.parse" || fn == "packaging.version.Version" || fn == "version.parse" || fn == "Version";
      if (!parse || !t[m].isOp("(")) return false;
      ++m;
      if (t[m].kind == Tok::String) {
        literal = t[m].text, isTriton = false, ++m;
      } else {
        const std::string arg = resolve(file.aliases, dottedName(t, m));
        if (arg != "triton.__version__") return false;
        isTriton = true;
      }
      if (!t[m].isOp(")")) return false;
      k = m + 1;
      return true;
    };
    size_t k = i;
    bool leftTriton = false, rightTriton = false;
    std::string leftLit, rightLit;
    if (versionOf(k, leftTriton, leftLit) && t[k].kind == Tok::Op) {
      const std::string op = t[k].text;
      size_t r = k + 1;
      if (versionOf(r, rightTriton, rightLit) && leftTriton != rightTriton) {
        std::optional<bool> v = compareTritonVersion(op, leftTriton ? rightLit : leftLit, leftTriton);
        if (!v) return std::nullopt;
        i = r;
        return done(*v);
      }
    }
  }
  if (t[i].isName("True") || t[i].isName("False")) {
    const bool v = t[i++].isName("True");
    return done(v);
  }
  size_t m = i;
  const std::string callee = resolve(file.aliases, dottedName(t, m));
  if ((callee == "os.environ.get" || callee == "os.getenv") && t[m].isOp("(") && t[m + 1].kind == Tok::String) {
    const std::string var = t[m + 1].text;
    size_t k = m + 2;
    std::optional<std::string> dflt;
    if (t[k].isOp(",") && t[k + 1].kind == Tok::String) dflt = t[k + 1].text, k += 2;
    if (!t[k].isOp(")")) return std::nullopt;
    ++k;
    const bool eq = t[k].isOp("==");
    if (!(eq || t[k].isOp("!=")) || t[k + 1].kind != Tok::String) return std::nullopt;
    const char* env = std::getenv(var.c_str());
    if (!env && !dflt) return std::nullopt;  // None compared with a string: not read here
    const bool same = (env ? std::string(env) : *dflt) == t[k + 1].text;
    i = k + 2;
    return done(eq ? same : !same);
  }
  // NAME("triton", operator.OP, "X.Y.Z"): a version check of Triton, which is 3.6.0 here.
  if (t[m].isOp("(") && t[m + 1].kind == Tok::String && t[m + 1].text == "triton" && t[m + 2].isOp(",")) {
    size_t k = m + 3;
    const std::string op = resolve(file.aliases, dottedName(t, k));
    if (!t[k].isOp(",") || t[k + 1].kind != Tok::String || !t[k + 2].isOp(")")) return std::nullopt;
    std::optional<bool> v = op.rfind("operator.", 0) == 0 ? compareTritonVersion(op, t[k + 1].text, true) : std::nullopt;
    if (!v) return std::nullopt;
    i = k + 3;
    return done(*v);
  }
  return std::nullopt;
}

const FunctionDef* parseFunction(SourceFile& file, const std::string& name) {
  for (auto& j : file.jit)
    if (j.name == name) {
      if (!j.def) j.def = Parser(file.tokens, j.defToken, file.path).function();
      return j.def.get();
    }
  return nullptr;
}

const FunctionDef& requireFunction(SourceFile& file, const std::string& name) {
  if (const FunctionDef* f = parseFunction(file, name)) return *f;
  std::string known;
  for (auto& j : file.jit) known += (known.empty() ? "" : ", ") + j.name;
  std::string hint = known.empty() ? "the file has no @triton.jit functions" : "the jit functions here are: " + known;
  if (known.empty()) {  // decorators that end in `jit` but do not resolve to Triton's, as imported here
    std::string seen;
    const auto& t = file.tokens;
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (!t[i].isOp("@")) continue;
      size_t k = i + 1;
      const std::string d = dottedName(t, k);
      if (d.size() >= 3 && d.compare(d.size() - 3, 3, "jit") == 0 && seen.find("'@" + d + "'") == std::string::npos)
        seen += (seen.empty() ? "" : ", ") + ("'@" + d + "' (" + resolve(file.aliases, d) + ")");
    }
    if (!seen.empty()) hint = "its decorators " + seen + " do not resolve to triton.jit as the file imports them";
  }
  throw UserError(Location::at(file.path, 1, 1), "no @triton.jit function named '" + name + "' in this file", hint);
}

ExprP parseAssignedValue(const SourceFile& file, size_t at) {
  try {
    Parser p(file.tokens, at, file.path);
    ExprP e = p.exprOnly();
    const size_t end = p.pos();
    if (file.tokens[end].kind != Tok::Newline && file.tokens[end].kind != Tok::EndOfFile) return nullptr;
    return e;
  } catch (const UserError&) {
    return nullptr;
  }
}

ExprP parseGlobalValue(const SourceFile& file, size_t at) {
  const auto& t = file.tokens;
  size_t i = at + 1;
  if (t[i].isOp(":")) {
    ++i;
    dottedName(t, i);
  }
  return parseAssignedValue(file, i + 1);  // past '='
}

std::unique_ptr<FunctionDef> parseFunctionText(const std::string& path, const std::string& text) {
  auto toks = tokenize(text);
  for (size_t i = 0; i < toks.size(); ++i)
    if (toks[i].isName("def")) return Parser(toks, i, std::make_shared<const std::string>(path)).function();
  throw UserError(Location::at(std::make_shared<const std::string>(path), 1, 1), "no function definition found");
}

}  // namespace tawa::frontend
