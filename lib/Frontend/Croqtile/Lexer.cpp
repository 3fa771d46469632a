//===- Lexer.cpp - Croqtile lexer and preprocessor ------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Lexer.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cctype>

using namespace mlir::croq::croqtile;
using llvm::SMLoc;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

static const char *const kPuncts[] = {
    "<<=", ">>=", "=>", "->", "::", "++", "--", "+=", "-=", "*=", "/=", "%=",
    "&=",  "|=",  "^=", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "#+",
    "#-",  "#*",  "#/", "#%", "##"};

bool mlir::croq::croqtile::lexBuffer(llvm::SourceMgr &sourceMgr,
                                     unsigned bufferId,
                                     std::vector<Token> &tokens,
                                     const ErrorFn &error) {
  StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  const char *begin = text.begin(), *end = text.end(), *p = begin;
  bool lineStart = true, space = false;
  auto loc = [](const char *ptr) { return SMLoc::getFromPointer(ptr); };
  while (p < end) {
    char c = *p;
    if (c == '\n') {
      lineStart = true;
      space = true;
      ++p;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      ++p;
      continue;
    }
    // A backslash-newline continues a line (macro bodies).
    if (c == '\\' && p + 1 < end && (p[1] == '\n' || p[1] == '\r')) {
      p += (p[1] == '\r' && p + 2 < end && p[2] == '\n') ? 3 : 2;
      space = true;
      continue;
    }
    if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p < end && *p != '\n')
        ++p;
      continue;
    }
    if (c == '/' && p + 1 < end && p[1] == '*') {
      const char *start = p;
      p += 2;
      while (p + 1 < end && !(p[0] == '*' && p[1] == '/'))
        ++p;
      if (p + 1 >= end)
        return error(loc(start), "unterminated /* comment");
      p += 2;
      space = true;
      continue;
    }
    Token tok;
    tok.loc = loc(p);
    tok.atLineStart = lineStart;
    tok.spaceBefore = space;
    lineStart = false;
    space = false;
    const char *start = p;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (p < end && (std::isalnum(static_cast<unsigned char>(*p)) || *p == '_'))
        ++p;
      tok.kind = TokKind::Ident;
      tok.text = std::string(start, p);
      // A C++ raw string, R"delim(...)delim" (in __cpp__ and host code).
      if (p < end && *p == '"' &&
          (tok.text == "R" || tok.text == "u8R" || tok.text == "uR" ||
           tok.text == "UR" || tok.text == "LR")) {
        const char *open = p + 1;
        while (open < end && *open != '(' && *open != '"' && *open != '\n' &&
               open - p <= 17)
          ++open;
        if (open >= end || *open != '(')
          return error(tok.loc, "malformed raw string literal: expected "
                                "R\"delimiter(");
        std::string closing = ")" + std::string(p + 1, open) + "\"";
        StringRef rest(open + 1, end - open - 1);
        size_t close = rest.find(closing);
        if (close == StringRef::npos)
          return error(tok.loc, "unterminated raw string literal");
        p = rest.data() + close + closing.size();
        tok.kind = TokKind::String;
        tok.text = std::string(start, p);
        tokens.push_back(std::move(tok));
        continue;
      }
      // `group-4` is one token.
      if (tok.text == "group" && end - p >= 2 && p[0] == '-' && p[1] == '4' &&
          (end - p == 2 || !std::isalnum(static_cast<unsigned char>(p[2])))) {
        p += 2;
        tok.text = "group-4";
      }
      tokens.push_back(std::move(tok));
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && p + 1 < end && std::isdigit(static_cast<unsigned char>(p[1])))) {
      bool isFloat = false;
      if (c == '0' && p + 1 < end && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        while (p < end && std::isxdigit(static_cast<unsigned char>(*p)))
          ++p;
      } else {
        while (p < end && (std::isdigit(static_cast<unsigned char>(*p)) || *p == '.')) {
          isFloat |= *p == '.';
          ++p;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
          const char *q = p + 1;
          if (q < end && (*q == '+' || *q == '-'))
            ++q;
          if (q < end && std::isdigit(static_cast<unsigned char>(*q))) {
            isFloat = true;
            p = q;
            while (p < end && std::isdigit(static_cast<unsigned char>(*p)))
              ++p;
          }
        }
      }
      while (p < end && (*p == 'f' || *p == 'F' || *p == 'u' || *p == 'U' ||
                         *p == 'l' || *p == 'L')) {
        isFloat |= (*p == 'f' || *p == 'F') && !(start[0] == '0' && start + 1 < end &&
                                                (start[1] == 'x' || start[1] == 'X'));
        ++p;
      }
      tok.kind = isFloat ? TokKind::Float : TokKind::Int;
      tok.text = std::string(start, p);
      tokens.push_back(std::move(tok));
      continue;
    }
    if (c == '"' || c == '\'') {
      ++p;
      while (p < end && *p != c && *p != '\n') {
        if (*p == '\\' && p + 1 < end)
          ++p;
        ++p;
      }
      if (p >= end || *p != c)
        return error(tok.loc, c == '"' ? "unterminated string literal"
                                       : "unterminated character literal");
      ++p;
      tok.kind = c == '"' ? TokKind::String : TokKind::Char;
      tok.text = std::string(start, p);
      tokens.push_back(std::move(tok));
      continue;
    }
    tok.kind = TokKind::Punct;
    bool matched = false;
    for (const char *punct : kPuncts) {
      size_t n = std::strlen(punct);
      if (static_cast<size_t>(end - p) >= n && StringRef(p, n) == punct) {
        tok.text = punct;
        p += n;
        matched = true;
        break;
      }
    }
    if (!matched) {
      if (!std::strchr("{}[]()<>;,.:=+-*/%!&|^~?#@$", c) || c == 0)
        return error(tok.loc, "unexpected character in source");
      tok.text = std::string(1, c);
      ++p;
    }
    tokens.push_back(std::move(tok));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Preprocessor
//===----------------------------------------------------------------------===//

namespace {

struct Macro {
  bool functionLike = false;
  std::vector<std::string> params;
  std::vector<Token> body;
};

class Preprocessor {
public:
  Preprocessor(llvm::SourceMgr &sourceMgr, const PreprocessorOptions &options,
               const ErrorFn &error, const ErrorFn &warning)
      : sourceMgr(sourceMgr), options(options), error(error),
        warning(warning) {}

  bool run(std::vector<Token> &out);

private:
  bool processBuffer(unsigned bufferId, unsigned depth, std::vector<Token> &out);
  bool directive(const std::vector<Token> &line, unsigned bufferId,
                 unsigned depth, std::vector<Token> &out);
  bool expand(const std::vector<Token> &in, std::vector<Token> &out,
              llvm::StringSet<> &disabled, SMLoc useLoc, unsigned depth);
  bool evalCondition(const std::vector<Token> &line, size_t from,
                     unsigned bufferId, bool &value);
  /// Where `#include` of `file` from `bufferId` finds it: the including
  /// file's directory, then the -I paths; empty when nowhere.
  std::string findInclude(StringRef file, unsigned bufferId);
  /// Reads `"file"` or `<file>` at line[i]; i is left after it.
  bool includeName(const std::vector<Token> &line, size_t &i, std::string &file);
  bool active() const {
    return conditions.empty() || conditions.back().taking;
  }

  struct Condition {
    bool taking;      // this branch is live
    bool anyTaken;    // a branch of this #if was taken
    bool parentLive;  // the enclosing region is live
    bool seenElse = false;
    SMLoc loc;
  };

  llvm::SourceMgr &sourceMgr;
  const PreprocessorOptions &options;
  const ErrorFn &error;
  const ErrorFn &warning;
  llvm::StringMap<Macro> macros;
  std::vector<Condition> conditions;
  // Expanded tokens, against runaway macros: far past any real program
  // (upstream's largest files expand to well under a million), and small
  // enough to fail in about a second.
  size_t budget = 4'000'000;
};

} // namespace

bool Preprocessor::run(std::vector<Token> &out) {
  for (const std::string &define : options.defines) {
    StringRef text(define);
    auto [name, value] = text.split('=');
    if (name.empty())
      return error(SMLoc(), "empty name in -D" + define);
    Macro macro;
    std::string body = text.contains('=') ? value.str() : std::string("1");
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(body, "<-D " + name.str() + ">");
    unsigned id = sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
    if (!lexBuffer(sourceMgr, id, macro.body, error))
      return false;
    macros[name] = std::move(macro);
  }
  if (!processBuffer(sourceMgr.getMainFileID(), 0, out))
    return false;
  if (!conditions.empty())
    return error(conditions.back().loc, "#if without #endif");
  return true;
}

bool Preprocessor::processBuffer(unsigned bufferId, unsigned depth,
                                 std::vector<Token> &out) {
  if (depth > 64)
    return error(SMLoc(), "#include nested more than 64 deep");
  std::vector<Token> tokens;
  if (!lexBuffer(sourceMgr, bufferId, tokens, error))
    return false;
  size_t conditionDepth = conditions.size();
  std::vector<Token> pending;
  auto flush = [&]() {
    if (pending.empty())
      return true;
    llvm::StringSet<> disabled;
    bool ok = expand(pending, out, disabled, SMLoc(), 0);
    pending.clear();
    return ok;
  };
  for (size_t i = 0; i < tokens.size();) {
    const Token &tok = tokens[i];
    if (tok.atLineStart && tok.is("#")) {
      std::vector<Token> line{tok};
      for (++i; i < tokens.size() && !tokens[i].atLineStart; ++i)
        line.push_back(tokens[i]);
      if (!flush() || !directive(line, bufferId, depth, out))
        return false;
      continue;
    }
    if (active())
      pending.push_back(tok);
    ++i;
  }
  if (!flush())
    return false;
  if (conditions.size() != conditionDepth)
    return error(conditions.back().loc, "#if without #endif in this file");
  return true;
}

bool Preprocessor::directive(const std::vector<Token> &line, unsigned bufferId,
                             unsigned depth, std::vector<Token> &out) {
  if (line.size() < 2)
    return true; // A null directive.
  const Token &name = line[1];
  StringRef kind = name.text;
  if (kind == "ifdef" || kind == "ifndef" || kind == "if") {
    bool parentLive = active();
    bool value = false;
    if (parentLive) {
      if (kind == "if") {
        if (!evalCondition(line, 2, bufferId, value))
          return false;
      } else {
        if (line.size() < 3 || !line[2].isIdent())
          return error(name.loc, "#" + kind + " needs a macro name");
        value = macros.count(line[2].text) == (kind == "ifdef" ? 1u : 0u);
        if (kind == "ifndef")
          value = !macros.count(line[2].text);
      }
    }
    conditions.push_back({parentLive && value, parentLive && value, parentLive,
                          false, name.loc});
    return true;
  }
  if (kind == "elif" || kind == "else") {
    if (conditions.empty())
      return error(name.loc, "#" + kind + " without #if");
    Condition &cond = conditions.back();
    if (cond.seenElse)
      return error(name.loc, "#" + kind + " after #else");
    bool value = false;
    if (cond.parentLive && !cond.anyTaken) {
      if (kind == "else")
        value = true;
      else if (!evalCondition(line, 2, bufferId, value))
        return false;
    }
    cond.seenElse = kind == "else";
    cond.taking = value;
    cond.anyTaken |= value;
    return true;
  }
  if (kind == "endif") {
    if (conditions.empty())
      return error(name.loc, "#endif without #if");
    conditions.pop_back();
    return true;
  }
  if (!active())
    return true;
  if (kind == "define") {
    if (line.size() < 3 || !line[2].isIdent())
      return error(name.loc, "#define needs a macro name");
    Macro macro;
    size_t i = 3;
    if (i < line.size() && line[i].is("(") && !line[i].spaceBefore) {
      macro.functionLike = true;
      for (++i; i < line.size() && !line[i].is(")"); ++i) {
        if (line[i].is(","))
          continue;
        if (!line[i].isIdent() && !line[i].is("..."))
          return error(line[i].loc, "expected a macro parameter name");
        macro.params.push_back(line[i].text);
      }
      if (i >= line.size())
        return error(line[2].loc, "missing ')' in macro parameter list");
      ++i;
    }
    macro.body.assign(line.begin() + i, line.end());
    macros[line[2].text] = std::move(macro);
    return true;
  }
  if (kind == "undef") {
    if (line.size() < 3 || !line[2].isIdent())
      return error(name.loc, "#undef needs a macro name");
    macros.erase(line[2].text);
    return true;
  }
  if (kind == "include") {
    std::string file;
    size_t i = 2;
    if (!includeName(line, i, file))
      return error(name.loc, "#include needs \"file\" or <file>");
    std::string path = findInclude(file, bufferId);
    if (!path.empty()) {
      auto buffer = llvm::MemoryBuffer::getFile(path);
      if (!buffer)
        return error(line[2].loc, "cannot read '" + path + "'");
      unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), name.loc);
      return processBuffer(id, depth + 1, out);
    }
    // Host headers (<cuda.h>, "choreo.h") are not needed to import __co__
    // code; say so instead of failing.
    warning(line[2].loc, "'" + file +
                             "' not found in the -I paths; #include skipped");
    return true;
  }
  if (kind == "error") {
    std::string message;
    for (size_t i = 2; i < line.size(); ++i)
      message += (i > 2 ? " " : "") + line[i].text;
    return error(name.loc, "#error " + message);
  }
  if (kind == "pragma" || kind == "line" || kind == "warning")
    return true;
  return error(name.loc, "unknown preprocessor directive '#" + kind + "'");
}

bool Preprocessor::expand(const std::vector<Token> &in, std::vector<Token> &out,
                          llvm::StringSet<> &disabled, SMLoc useLoc,
                          unsigned depth) {
  if (depth > 256)
    return error(useLoc, "macro expansion nested more than 256 deep");
  for (size_t i = 0; i < in.size(); ++i) {
    Token tok = in[i];
    if (useLoc.isValid())
      tok.loc = useLoc;
    auto it = tok.isIdent() ? macros.find(tok.text) : macros.end();
    if (it == macros.end() || disabled.contains(tok.text)) {
      if (budget-- == 0)
        return error(tok.loc, "macro expansion produced too many tokens");
      out.push_back(std::move(tok));
      continue;
    }
    const Macro &macro = it->second;
    std::vector<Token> body;
    if (!macro.functionLike) {
      body = macro.body;
    } else {
      if (i + 1 >= in.size() || !in[i + 1].is("(")) {
        out.push_back(std::move(tok)); // A function-like name without a call.
        continue;
      }
      std::vector<std::vector<Token>> args(1);
      int nesting = 0;
      size_t j = i + 2;
      for (; j < in.size(); ++j) {
        const Token &arg = in[j];
        if (arg.is("(")) {
          ++nesting;
        } else if (arg.is(")")) {
          if (nesting-- == 0)
            break;
        } else if (arg.is(",") && nesting == 0) {
          args.emplace_back();
          continue;
        }
        args.back().push_back(arg);
      }
      if (j >= in.size())
        return error(tok.loc, "unterminated call of macro '" + tok.text + "'");
      if (args.size() == 1 && args[0].empty() && macro.params.empty())
        args.clear();
      if (args.size() != macro.params.size())
        return error(tok.loc, "macro '" + tok.text + "' takes " +
                                  llvm::Twine(macro.params.size()) +
                                  " arguments, got " + llvm::Twine(args.size()));
      std::vector<std::vector<Token>> expandedArgs;
      for (const std::vector<Token> &arg : args) {
        std::vector<Token> expanded;
        if (!expand(arg, expanded, disabled, SMLoc(), depth + 1))
          return false;
        expandedArgs.push_back(std::move(expanded));
      }
      for (const Token &b : macro.body) {
        auto param = std::find(macro.params.begin(), macro.params.end(), b.text);
        if (b.isIdent() && param != macro.params.end()) {
          const auto &arg = expandedArgs[param - macro.params.begin()];
          body.insert(body.end(), arg.begin(), arg.end());
        } else {
          body.push_back(b);
        }
      }
      i = j;
    }
    disabled.insert(tok.text);
    bool ok = expand(body, out, disabled, tok.loc, depth + 1);
    disabled.erase(tok.text);
    if (!ok)
      return false;
  }
  return true;
}

namespace {
/// Integer expressions of #if, over already expanded tokens.
class ConditionParser {
public:
  ConditionParser(const std::vector<Token> &toks, const ErrorFn &error)
      : toks(toks), error(error) {}

  bool parse(long long &value) {
    if (!ternary(value))
      return false;
    if (pos != toks.size())
      return error(toks[pos].loc, "unexpected '" + toks[pos].text +
                                      "' in #if expression");
    return true;
  }

private:
  bool at(StringRef text) {
    if (pos < toks.size() && toks[pos].is(text)) {
      ++pos;
      return true;
    }
    return false;
  }
  SMLoc here() const { return pos < toks.size() ? toks[pos].loc : (toks.empty() ? SMLoc() : toks.back().loc); }

  bool ternary(long long &v) {
    if (!binary(0, v))
      return false;
    if (!at("?"))
      return true;
    long long a, b;
    if (!ternary(a) || !at(":") || !ternary(b))
      return error(here(), "malformed ?: in #if expression");
    v = v ? a : b;
    return true;
  }

  static int precedence(StringRef op) {
    return llvm::StringSwitch<int>(op)
        .Case("||", 1).Case("&&", 2).Case("|", 3).Case("^", 4).Case("&", 5)
        .Cases({"==", "!="}, 6).Cases({"<", ">", "<=", ">="}, 7)
        .Cases({"<<", ">>"}, 8).Cases({"+", "-"}, 9).Cases({"*", "/", "%"}, 10)
        .Default(0);
  }

  bool binary(int minPrec, long long &lhs) {
    if (!unary(lhs))
      return false;
    while (pos < toks.size() && toks[pos].kind == TokKind::Punct) {
      StringRef op = toks[pos].text;
      int prec = precedence(op);
      if (prec == 0 || prec <= minPrec)
        break;
      SMLoc opLoc = toks[pos].loc;
      ++pos;
      long long rhs;
      if (!binary(prec, rhs))
        return false;
      if ((op == "/" || op == "%") && rhs == 0)
        return error(opLoc, "division by zero in #if expression");
      if (op == "||") lhs = lhs || rhs;
      else if (op == "&&") lhs = lhs && rhs;
      else if (op == "|") lhs |= rhs;
      else if (op == "^") lhs ^= rhs;
      else if (op == "&") lhs &= rhs;
      else if (op == "==") lhs = lhs == rhs;
      else if (op == "!=") lhs = lhs != rhs;
      else if (op == "<") lhs = lhs < rhs;
      else if (op == ">") lhs = lhs > rhs;
      else if (op == "<=") lhs = lhs <= rhs;
      else if (op == ">=") lhs = lhs >= rhs;
      else if (op == "<<") lhs = (rhs >= 0 && rhs < 63) ? lhs << rhs : 0;
      else if (op == ">>") lhs = (rhs >= 0 && rhs < 63) ? lhs >> rhs : 0;
      else if (op == "+") lhs = (long long)((unsigned long long)lhs + (unsigned long long)rhs);
      else if (op == "-") lhs = (long long)((unsigned long long)lhs - (unsigned long long)rhs);
      else if (op == "*") lhs = (long long)((unsigned long long)lhs * (unsigned long long)rhs);
      else if (op == "/") lhs = (lhs == LLONG_MIN && rhs == -1) ? lhs : lhs / rhs;
      else if (op == "%") lhs = (lhs == LLONG_MIN && rhs == -1) ? 0 : lhs % rhs;
    }
    return true;
  }

  bool unary(long long &v) {
    if (++depth > 512)
      return error(here(), "#if expression nested too deeply");
    bool ok = unaryImpl(v);
    --depth;
    return ok;
  }

  bool unaryImpl(long long &v) {
    if (at("!")) { if (!unary(v)) return false; v = !v; return true; }
    if (at("-")) { if (!unary(v)) return false; v = (long long)(0ull - (unsigned long long)v); return true; }
    if (at("+")) return unary(v);
    if (at("~")) { if (!unary(v)) return false; v = ~v; return true; }
    if (at("(")) {
      if (!ternary(v))
        return false;
      if (!at(")"))
        return error(here(), "expected ')' in #if expression");
      return true;
    }
    if (pos >= toks.size())
      return error(here(), "#if expression ends early");
    const Token &tok = toks[pos++];
    if (tok.kind == TokKind::Int) {
      StringRef digits = StringRef(tok.text).rtrim("uUlL");
      unsigned long long u;
      if (digits.getAsInteger(0, u))
        return error(tok.loc, "integer literal '" + tok.text + "' is too large");
      v = (long long)u;
      return true;
    }
    if (tok.isIdent()) { // An undefined name is 0.
      v = 0;
      return true;
    }
    return error(tok.loc, "unexpected '" + tok.text + "' in #if expression");
  }

  const std::vector<Token> &toks;
  const ErrorFn &error;
  size_t pos = 0;
  unsigned depth = 0;
};
} // namespace

bool Preprocessor::includeName(const std::vector<Token> &line, size_t &i,
                               std::string &file) {
  if (i < line.size() && line[i].kind == TokKind::String) {
    file = line[i].text.substr(1, line[i].text.size() - 2);
    ++i;
    return true;
  }
  if (i >= line.size() || !line[i].is("<"))
    return false;
  for (++i; i < line.size() && !line[i].is(">"); ++i)
    file += line[i].text;
  if (i >= line.size())
    return false;
  ++i;
  return true;
}

std::string Preprocessor::findInclude(StringRef file, unsigned bufferId) {
  llvm::SmallVector<std::string> dirs;
  StringRef current = sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
  dirs.push_back(llvm::sys::path::parent_path(current).str());
  dirs.append(options.includeDirs.begin(), options.includeDirs.end());
  for (const std::string &dir : dirs) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::sys::fs::is_regular_file(path))
      return std::string(path);
  }
  return "";
}

bool Preprocessor::evalCondition(const std::vector<Token> &line, size_t from,
                                 unsigned bufferId, bool &value) {
  std::vector<Token> resolved;
  for (size_t i = from; i < line.size(); ++i) {
    // `__has_include("file")` / `__has_include(<file>)`: 1 when #include
    // would find it. Host headers croq does not see are 0.
    if (line[i].is("__has_include") || line[i].is("__has_include_next")) {
      size_t j = i + 1;
      std::string file;
      if (j >= line.size() || !line[j].is("(") || !includeName(line, ++j, file) ||
          j >= line.size() || !line[j].is(")"))
        return error(line[i].loc, "expected __has_include(\"file\") or "
                                  "__has_include(<file>)");
      Token one = line[i];
      one.kind = TokKind::Int;
      one.text = findInclude(file, bufferId).empty() ? "0" : "1";
      resolved.push_back(one);
      i = j;
      continue;
    }
    if (line[i].is("defined")) {
      size_t j = i + 1;
      bool paren = j < line.size() && line[j].is("(");
      if (paren)
        ++j;
      if (j >= line.size() || !line[j].isIdent())
        return error(line[i].loc, "'defined' needs a macro name");
      Token one = line[i];
      one.kind = TokKind::Int;
      one.text = macros.count(line[j].text) ? "1" : "0";
      resolved.push_back(one);
      i = j + (paren ? 1 : 0);
      if (paren && (i >= line.size() || !line[i].is(")")))
        return error(line[j].loc, "expected ')' after defined(");
      continue;
    }
    resolved.push_back(line[i]);
  }
  std::vector<Token> expanded;
  llvm::StringSet<> disabled;
  if (!expand(resolved, expanded, disabled, SMLoc(), 0))
    return false;
  if (expanded.empty())
    return error(line[1].loc, "#" + line[1].text + " needs a condition");
  long long result;
  if (!ConditionParser(expanded, error).parse(result))
    return false;
  value = result != 0;
  return true;
}

bool mlir::croq::croqtile::preprocess(llvm::SourceMgr &sourceMgr,
                                      const PreprocessorOptions &options,
                                      std::vector<Token> &out,
                                      const ErrorFn &error,
                                      const ErrorFn &warning) {
  return Preprocessor(sourceMgr, options, error, warning).run(out);
}
