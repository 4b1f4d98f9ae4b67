#include "frontend/Lexer.h"

#include <array>
#include <cctype>
#include <cstring>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace tawa::frontend {

namespace {

bool isIdStart(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool isIdChar(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    indents_.push_back(0);
    bool atLineStart = true;
    while (true) {
      if (atLineStart && depth_ == 0) {
        if (!lineStart()) break;  // end of input
        atLineStart = false;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char c = s_[pos_];
      if (c == '\n' || c == '\r') {
        int lineOfNewline = line_;
        consumeNewlineChar();
        if (depth_ == 0) {
          emitNewline(lineOfNewline);
          atLineStart = true;
        }
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\f') {
        advance();
        continue;
      }
      if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n' && s_[pos_] != '\r') advance();
        continue;
      }
      if (c == '\\') {
        size_t p = pos_ + 1;
        if (p < s_.size() && (s_[p] == '\n' || s_[p] == '\r')) {
          advance();
          consumeNewlineChar();
          continue;
        }
        errorTok("unexpected character '\\'");
        advance();
        continue;
      }
      token();
    }
    if (!out_.empty() && out_.back().kind != Tok::Newline && out_.back().kind != Tok::Dedent &&
        out_.back().kind != Tok::Indent)
      emitNewline(line_);
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(Tok::Dedent, "", line_, 1);
    }
    push(Tok::EndOfFile, "", line_, col());
    return std::move(out_);
  }

 private:
  int col() const { return static_cast<int>(pos_ - lineBegin_) + 1; }
  void advance() { ++pos_; }
  void consumeNewlineChar() {
    if (s_[pos_] == '\r' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
    ++line_;
    lineBegin_ = pos_;
  }
  Token& push(Tok k, std::string text, int line, int c) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.line = line;
    t.col = c;
    out_.push_back(std::move(t));
    return out_.back();
  }
  void errorTok(std::string why) { push(Tok::Error, std::move(why), line_, col()); }
  void emitNewline(int line) {
    if (!out_.empty() && out_.back().kind != Tok::Newline && out_.back().kind != Tok::Indent &&
        out_.back().kind != Tok::Dedent)
      push(Tok::Newline, "", line, 1);
  }

  // Measures the indentation of a logical line; skips blank and comment-only lines. Returns false
  // at end of input.
  bool lineStart() {
    while (pos_ < s_.size()) {
      int width = 0;
      size_t p = pos_;
      while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\f')) {
        width = s_[p] == '\t' ? (width / 8 + 1) * 8 : (s_[p] == '\f' ? 0 : width + 1);
        ++p;
      }
      if (p >= s_.size()) {
        pos_ = p;
        return false;
      }
      if (s_[p] == '#') {
        while (p < s_.size() && s_[p] != '\n' && s_[p] != '\r') ++p;
      }
      if (p >= s_.size()) {
        pos_ = p;
        return false;
      }
      if (s_[p] == '\n' || s_[p] == '\r') {
        pos_ = p;
        consumeNewlineChar();
        continue;
      }
      if (s_[p] == '\\' && p + 1 < s_.size() && (s_[p + 1] == '\n' || s_[p + 1] == '\r')) {
        // A continuation on an otherwise empty line: the logical line starts after it.
        pos_ = p + 1;
        consumeNewlineChar();
        continue;
      }
      pos_ = p;
      int c = col();
      if (width > indents_.back()) {
        if (indents_.size() > kMaxIndentLevels) {  // Python's own limit, as for parentheses
          errorTok("too many levels of indentation (more than " + std::to_string(kMaxIndentLevels) + ")");
          return true;
        }
        indents_.push_back(width);
        push(Tok::Indent, "", line_, c);
      } else {
        while (width < indents_.back()) {
          indents_.pop_back();
          push(Tok::Dedent, "", line_, c);
        }
        if (width != indents_.back()) {
          errorTok("unindent does not match any outer indentation level");
          indents_.push_back(width);
        }
      }
      return true;
    }
    return false;
  }

  void token() {
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    int startCol = col(), startLine = line_;
    // String prefixes.
    if (isIdStart(c)) {
      size_t p = pos_;
      while (p < s_.size() && isIdChar(static_cast<unsigned char>(s_[p]))) ++p;
      std::string_view word = s_.substr(pos_, p - pos_);
      if (p < s_.size() && (s_[p] == '\'' || s_[p] == '"') && word.size() <= 2) {
        bool okPrefix = true, raw = false, f = false, b = false;
        for (char w : word) {
          char l = static_cast<char>(std::tolower(static_cast<unsigned char>(w)));
          if (l == 'r') raw = true;
          else if (l == 'f') f = true;
          else if (l == 'b') b = true;
          else if (l != 'u') okPrefix = false;
        }
        if (okPrefix) {
          pos_ = p;
          string(startLine, startCol, raw, f, b);
          return;
        }
      }
      pos_ = p;
      push(Tok::Name, std::string(word), startLine, startCol);
      return;
    }
    if (c == '\'' || c == '"') {
      string(startLine, startCol, false, false, false);
      return;
    }
    if (std::isdigit(c) || (c == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
      number(startLine, startCol);
      return;
    }
    static const std::array<std::string_view, 24> multi = {
        "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=", ">=",
        "==",  "!=",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "@=", ":="};
    for (auto op : multi) {
      if (s_.substr(pos_, op.size()) == op) {
        pos_ += op.size();
        push(Tok::Op, std::string(op), startLine, startCol);
        return;
      }
    }
    static const std::string_view singles = "+-*/%@&|^~<>()[]{},:.;=";
    if (singles.find(static_cast<char>(c)) != std::string_view::npos) {
      ++pos_;
      if (c == '(' || c == '[' || c == '{') ++depth_;
      if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
      if (depth_ > kMaxParenDepth) {  // Python's own limit; deeper would only overflow the parser's stack
        push(Tok::Error, "too many nested parentheses (more than " + std::to_string(kMaxParenDepth) + ")", startLine, startCol);
        depth_ = 0;
        return;
      }
      push(Tok::Op, std::string(1, static_cast<char>(c)), startLine, startCol);
      return;
    }
    ++pos_;
    push(Tok::Error, std::string("unexpected character '") + static_cast<char>(c) + "'", startLine, startCol);
  }

  void string(int startLine, int startCol, bool raw, bool f, bool b) {
    char q = s_[pos_];
    bool triple = s_.substr(pos_, 3) == std::string(3, q);
    pos_ += triple ? 3 : 1;
    std::string val;
    while (true) {
      if (pos_ >= s_.size()) {
        push(Tok::Error, "unterminated string literal", startLine, startCol);
        return;
      }
      char c = s_[pos_];
      if (c == q) {
        if (!triple) {
          ++pos_;
          break;
        }
        if (s_.substr(pos_, 3) == std::string(3, q)) {
          pos_ += 3;
          break;
        }
        val += c;
        ++pos_;
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) {
          push(Tok::Error, "unterminated string literal", startLine, startCol);
          return;  // the newline is handled by the main loop
        }
        val += '\n';
        consumeNewlineChar();
        continue;
      }
      if (c == '\\' && pos_ + 1 < s_.size()) {
        char n = s_[pos_ + 1];
        if (n == '\n' || n == '\r') {
          ++pos_;
          consumeNewlineChar();
          if (raw) val += "\\\n";
          continue;
        }
        pos_ += 2;
        if (raw) {
          val += '\\';
          val += n;
          continue;
        }
        switch (n) {
          case 'n': val += '\n'; break;
          case 't': val += '\t'; break;
          case 'r': val += '\r'; break;
          case '0': val += '\0'; break;
          case '\\': val += '\\'; break;
          case '\'': val += '\''; break;
          case '"': val += '"'; break;
          default: val += '\\'; val += n; break;
        }
        continue;
      }
      val += c;
      ++pos_;
    }
    Token& t = push(Tok::String, std::move(val), startLine, startCol);
    t.fstring = f;
    t.bytes = b;
  }

  void number(int startLine, int startCol) {
    size_t start = pos_;
    auto digitsOf = [&](auto pred) {
      while (pos_ < s_.size() && (pred(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    };
    auto isDec = [](unsigned char ch) { return std::isdigit(ch) != 0; };
    std::string clean;
    if (s_[pos_] == '0' && pos_ + 1 < s_.size() && std::strchr("xXoObB", s_[pos_ + 1]) && s_[pos_ + 1] != '\0') {
      char k = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[pos_ + 1])));
      pos_ += 2;
      size_t ds = pos_;
      digitsOf([](unsigned char ch) { return std::isxdigit(ch) != 0; });
      for (size_t i = ds; i < pos_; ++i)
        if (s_[i] != '_') clean += s_[i];
      int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
      errno = 0;
      char* end = nullptr;
      unsigned long long v = clean.empty() ? 0 : std::strtoull(clean.c_str(), &end, base);
      bool bad = clean.empty() || errno != 0 || *end != '\0' ||
                 v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max());
      if (bad) {
        push(Tok::Error, "invalid or too large integer literal '" + std::string(s_.substr(start, pos_ - start)) + "'",
             startLine, startCol);
        return;
      }
      Token& t = push(Tok::Int, std::string(s_.substr(start, pos_ - start)), startLine, startCol);
      t.ival = static_cast<int64_t>(v);
      return;
    }
    bool isFloatLit = false;
    digitsOf(isDec);
    if (pos_ < s_.size() && s_[pos_] == '.') {
      isFloatLit = true;
      ++pos_;
      digitsOf(isDec);
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) {
        isFloatLit = true;
        pos_ = p;
        digitsOf(isDec);
      }
    }
    std::string spelled(s_.substr(start, pos_ - start));
    if (pos_ < s_.size() && (s_[pos_] == 'j' || s_[pos_] == 'J')) {
      ++pos_;
      push(Tok::Error, "complex literals are not supported", startLine, startCol);
      return;
    }
    for (char ch : spelled)
      if (ch != '_') clean += ch;
    errno = 0;
    if (isFloatLit) {
      Token& t = push(Tok::Float, spelled, startLine, startCol);
      t.fval = std::strtod(clean.c_str(), nullptr);
      return;
    }
    char* end = nullptr;
    long long v = std::strtoll(clean.c_str(), &end, 10);
    if (errno == ERANGE) {
      push(Tok::Error, "integer literal '" + spelled + "' does not fit in 64 bits", startLine, startCol);
      return;
    }
    Token& t = push(Tok::Int, spelled, startLine, startCol);
    t.ival = v;
  }

  std::string_view s_;
  size_t pos_ = 0, lineBegin_ = 0;
  int line_ = 1;
  static constexpr int kMaxParenDepth = 200;
  static constexpr size_t kMaxIndentLevels = 100;
  int depth_ = 0;
  std::vector<int> indents_;
  std::vector<Token> out_;
};

}  // namespace

bool isKeyword(std::string_view n) {
  static const std::array<std::string_view, 35> kw = {
      "False", "None",   "True",    "and",      "as",   "assert", "async", "await",  "break",
      "class", "continue", "def",   "del",      "elif", "else",   "except", "finally", "for",
      "from",  "global", "if",      "import",   "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",   "raise",   "return",   "try",  "while",  "with",  "yield"};
  for (auto k : kw)
    if (k == n) return true;
  return false;
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace tawa::frontend
