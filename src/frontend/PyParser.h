// Reads a .py file: finds its @triton.jit functions and the import aliases of triton, and parses a
// jit function's body (the Python subset of Ast.h) on demand.
//
// Requires: the file's text. Top-level code may be any Python at all: scanning it never fails.
// Guarantees: scanSource finds every `def` (at any nesting) whose decorator list contains triton.jit
// (spelled through any alias: `@triton.jit`, `@triton.jit(...)`, `@jit` after `from triton import
// jit`), including under other decorators such as a multi-line `@triton.autotune(...)`.
// parseFunction either returns the function's tree or throws a UserError at file:line:col naming
// the construct that is outside the subset.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/Ast.h"
#include "frontend/Lexer.h"
#include "ir/Diagnostic.h"

namespace tawa::frontend {

struct SourceFile {
  std::shared_ptr<const std::string> path;
  std::vector<Token> tokens;
  struct Jit {
    std::string name;
    size_t defToken = 0;  // index of the `def` token
    Pos pos;
    std::vector<size_t> decorators;     // the first token of each decorator (after its '@')
    std::vector<std::pair<int, int>> branches;  // the module-level if/try branches the def lies in (as Binding's)
    bool constexprFn = false;  // decorated @tl.constexpr: a plain function Triton calls at compile time
    std::unique_ptr<FunctionDef> def;  // parsed on first use
  };
  std::vector<Jit> jit;
  // Local names bound by imports of triton: "tl" -> "triton.language", "jit" -> "triton.jit".
  std::map<std::string, std::string> aliases;
  // Every module-level binding of a name to a dotted path, in source order: imports (also in
  // `if`/`try` branches) and `NAME = dotted.name` (`exp = tl.exp`), resolved through the aliases,
  // with the module-level branches it lies in. A name bound in several branches is resolved where
  // it is read (Lower.cpp): the branches whose conditions are known decide, else the first binding
  // that Triton 3.6 provides.
  struct Binding {
    std::string target;
    std::vector<std::pair<int, int>> branches;  // (index into ifs, branch number), outermost first
  };
  std::map<std::string, std::vector<Binding>> bindings;
  // Module-level `if`/`elif`/`else` and `try`/`except` statements: per branch, the first token of its
  // condition, kElse for `else`, kTry for the branches of a try (unknowable here).
  static constexpr size_t kElse = static_cast<size_t>(-1), kTry = static_cast<size_t>(-2);
  std::vector<std::vector<size_t>> ifs;
  // `from module import *`: the modules, searched for names nothing else binds.
  std::vector<std::string> starImports;
  // Module-level `NAME = tl.constexpr(...)`: name -> the statement's first token (parsed on first
  // use).
  std::map<std::string, size_t> globals;
  // Module-level `NAME: tl.constexpr = ...`, which Triton does not let a jit function read (only the
  // form above): name -> the statement's first token, for the error at the first read.
  std::map<std::string, size_t> annotatedGlobals;
  // Module-level `NAME = <expression>` bound once outside every if/try branch: name -> the
  // expression's first token (a condition such as `TRITON3 = version.parse(triton.__version__) >=
  // ...`, which moduleCondition reads where `if TRITON3:` tests it); names bound more than once map
  // to npos.
  std::map<std::string, size_t> assigned;

  Location loc(Pos p) const { return Location::at(path, p.line, p.col); }
  const Jit* find(const std::string& name) const;
};

std::unique_ptr<SourceFile> scanSource(const std::string& path, const std::string& text);

// Parses (once) the jit function `name`; null if the file has no such jit function.
const FunctionDef* parseFunction(SourceFile& file, const std::string& name);
// The same, or a UserError at the file naming the jit functions it has.
const FunctionDef& requireFunction(SourceFile& file, const std::string& name);

// Parses the expression of a module-level constexpr assignment starting at token `at`; null when it
// is not of a form the subset reads.
ExprP parseGlobalValue(const SourceFile& file, size_t at);
// The expression that starts at token `at` and ends its line (a module-level `NAME = <expression>`);
// null if it is not one.
ExprP parseAssignedValue(const SourceFile& file, size_t at);

// The value of a module-level condition starting at token `at`, when it is of a form whose value is
// known at compile time: True/False, `not`, `os.environ.get('X', 'd') == 'v'` (and !=, os.getenv; the
// environment of the compiling process, as at import), a version comparison of "triton" with Triton
// 3.6.0 (`compare_version("triton", operator.ge, "3.0.0")`); nullopt otherwise.
std::optional<bool> moduleCondition(const SourceFile& file, size_t at);

// What a jit function's decorators say of a parameter the launch does not give: a
// @triton.heuristics lambda of the form `args['x'] is [not] None` (IsNone; a lambda of another form
// is Unread), or the literal its @triton.autotune's first triton.Config gives it (Literal; Unread when
// that config sets no literal). Nothing when no decorator names it.
struct DecoratorSays {
  enum class Kind { Nothing, IsNone, Literal, Unread } kind = Kind::Nothing;
  std::string decorator;           // "triton.heuristics" or "triton.autotune"
  int line = 0;                    // the decorator's line
  std::string arg;                 // IsNone: x of args['x']
  bool negate = false;             // IsNone: `is not None`
  const Token* literal = nullptr;  // Literal: an Int, a Float, True or False
};
DecoratorSays decoratorSays(const SourceFile& file, const SourceFile::Jit& jit, const std::string& name);

// Parses a standalone statement list (for tests): the text is one function body at column 0.
std::unique_ptr<FunctionDef> parseFunctionText(const std::string& path, const std::string& text);

}  // namespace tawa::frontend
