// A Python tokenizer for whole .py files. It never throws: text it cannot read (a stray character,
// an unterminated string, inconsistent dedent) becomes an Error token, so arbitrary top-level Python
// outside the jit functions cannot make the front end fail; the parser reports an Error token only
// when it meets one inside a jit function.
//
// Requires: UTF-8 (or ASCII) source text.
// Guarantees: INDENT/DEDENT/NEWLINE as Python's tokenizer emits them (no NEWLINE inside brackets,
// backslash continuations joined, blank and comment-only lines skipped); every token carries its
// 1-based line and column; the stream ends with DEDENTs back to column 0 and one EndOfFile.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tawa::frontend {

enum class Tok : uint8_t { Name, Int, Float, String, Op, Newline, Indent, Dedent, EndOfFile, Error };

struct Token {
  Tok kind = Tok::Error;
  std::string text;  // Name/Op: the spelling; String: the decoded value; Error: the reason
  int line = 0, col = 0;
  int64_t ival = 0;     // Int
  double fval = 0;      // Float
  bool fstring = false; // String: had an f prefix
  bool bytes = false;   // String: had a b prefix
  bool is(Tok k, std::string_view t) const { return kind == k && text == t; }
  bool isOp(std::string_view t) const { return kind == Tok::Op && text == t; }
  bool isName(std::string_view t) const { return kind == Tok::Name && text == t; }
};

std::vector<Token> tokenize(std::string_view source);

// True for Python's reserved words (they lex as Name tokens; the parser tells them apart).
bool isKeyword(std::string_view name);

}  // namespace tawa::frontend
