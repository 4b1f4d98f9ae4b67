// The syntax tree of the Python subset that @triton.jit functions use. One node type per category
// (Expr, Stmt), tagged by kind, owning their children. Every node carries the 1-based line:col of
// its first token (for binary operators: of the operator), which the lowering stamps on the IR.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tawa::frontend {

struct Pos {
  int line = 0, col = 0;
};

struct Expr;
using ExprP = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Name,       // name
    Int,        // ival
    Float,      // fval
    Str,        // sval
    Bool,       // ival (0/1)
    None,
    Attribute,  // kids[0].name
    Call,       // kids[0](kids[1..]) with keywords
    Subscript,  // kids[0][kids[1..]]; each index is an expression, a Slice or None
    Slice,      // kids[0]:kids[1]:kids[2] (null children are absent parts)
    BinOp,      // kids[0] op kids[1]; op: "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>"
    UnaryOp,    // op kids[0]; op: "-", "+", "~", "not"
    BoolOp,     // kids[0] op kids[1] ...; op: "and" | "or"
    Compare,    // kids[0] ops[0] kids[1] ops[1] kids[2] ...; ops: "<", "==", "in", "not in", "is", "is not", ...
    IfExp,      // kids[1] if kids[0] else kids[2]
    Tuple,
    List,
  };
  Kind kind;
  Pos pos;
  std::string name;  // Name, Attribute (the attribute), BinOp/UnaryOp/BoolOp (the operator)
  int64_t ival = 0;
  double fval = 0;
  std::string sval;
  std::vector<ExprP> kids;  // may hold nulls for Slice parts
  std::vector<std::pair<std::string, ExprP>> keywords;  // Call
  std::vector<std::string> ops;  // Compare
  int readIndex = -1;  // Name: the order of this read in its function (for liveness)

  Expr(Kind k, Pos p) : kind(k), pos(p) {}
};

struct Stmt;
using StmtP = std::unique_ptr<Stmt>;
using Body = std::vector<StmtP>;

struct Stmt {
  enum class Kind {
    Expr,       // value
    Assign,     // targets[0] = targets[1] = ... = value
    AugAssign,  // targets[0] op= value
    AnnAssign,  // targets[0]: annotation [= value]
    If,         // if test: body else: orelse (elif is a nested If in orelse)
    For,        // for targets[0] in value: body
    While,      // while test: body
    Return,     // return [value]
    Pass,
    Assert,     // assert test [, value]
    Raise,      // raise [value] (an error where it is reached: Triton compiles none)
  };
  Kind kind;
  Pos pos;
  std::vector<ExprP> targets;
  ExprP value, test, annotation;
  std::string op;  // AugAssign
  Body body, orelse;
  // Pre-order numbering of the reads (Name loads) inside this statement: [readBegin, readEnd).
  int readBegin = 0, readEnd = 0;

  Stmt(Kind k, Pos p) : kind(k), pos(p) {}
};

struct Param {
  std::string name;
  Pos pos;
  ExprP annotation;  // may be null
  ExprP defaultValue;
  bool isConstexpr = false;  // annotated tl.constexpr (any alias spelling ending in .constexpr)
  bool keywordOnly = false;  // after a bare `*`: bound by keyword only
};

struct FunctionDef {
  std::string name;
  Pos pos;  // of the `def` keyword
  std::vector<Param> params;
  Body body;
  // name -> the read indices of that name, ascending (for the liveness of loop-carried values).
  std::unordered_map<std::string, std::vector<int>> reads;
  int numReads = 0;
};

}  // namespace tawa::frontend
