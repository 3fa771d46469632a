//===- Parser.cpp - Croqtile parser ---------------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A recursive-descent parser for `__co__` functions, following the grammar
// and operator precedence of ../shared/reference/croqtile-language.md (which
// differs from C: `&`, `^`, `|` bind tighter than unary operators and binary
// `#` tighter than `*`). Nesting is bounded so that hostile input cannot
// exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir::croq::croqtile;
using llvm::SMLoc;
using llvm::StringRef;

bool mlir::croq::croqtile::isElementTypeName(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases({"f64", "tf32", "f32", "f16", "bf16", "f8", "f8_e4m3", "f8_e5m2"},
             true)
      .Cases({"f6_e2m3", "f6_e3m2", "f4_e2m1"}, true)
      .Cases({"u64", "s64", "u32", "s32", "u16", "s16", "u8", "s8"}, true)
      .Cases({"u6", "s6", "u4", "s4", "u2", "s2", "u1", "bin1"}, true)
      .Cases({"half", "bfp16", "float", "double"}, true)
      .Default(false);
}

/// A deep copy of an expression (heights are bounded, so is the recursion).
/// The text of a C string literal `"..."` (quotes included in `quoted`).
static bool unquote(StringRef quoted, std::string &out) {
  // R"delim(...)delim": the text between the parentheses, as written.
  if (!quoted.starts_with("\"")) {
    StringRef raw = quoted.drop_until([](char c) { return c == '"'; });
    size_t open = raw.find('(');
    if (open == StringRef::npos)
      return false;
    size_t delimiter = open - 1;
    out += raw.substr(open + 1, raw.size() - open - 1 - delimiter - 2).str();
    return true;
  }
  StringRef body = quoted.drop_front().drop_back();
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= body.size())
      return false;
    switch (body[i]) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case 'a': out += '\a'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'v': out += '\v'; break;
    case '?': out += '?'; break;
    case '\\': out += '\\'; break;
    case '"': out += '"'; break;
    case '\'': out += '\''; break;
    case 'x': {
      // \xHH...: hex digits, as many as follow.
      unsigned value = 0, digits = 0;
      while (i + 1 < body.size() && llvm::isHexDigit(body[i + 1])) {
        value = value * 16 + llvm::hexDigitValue(body[++i]);
        ++digits;
      }
      if (digits == 0 || value > 255)
        return false;
      out += static_cast<char>(value);
      break;
    }
    default: {
      // \ooo: up to three octal digits (\0 among them).
      if (body[i] < '0' || body[i] > '7')
        return false;
      unsigned value = body[i] - '0';
      for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' &&
                      body[i + 1] <= '7';
           ++k)
        value = value * 8 + (body[++i] - '0');
      if (value > 255)
        return false;
      out += static_cast<char>(value);
      break;
    }
    }
  }
  return true;
}

static ExprPtr cloneExpr(const Expr &e) {
  auto copy = std::make_unique<Expr>(e.kind, e.loc);
  copy->name = e.name;
  copy->intValue = e.intValue;
  copy->floatValue = e.floatValue;
  copy->isF32 = e.isF32;
  copy->hasArgs = e.hasArgs;
  copy->typeArgs = e.typeArgs;
  copy->height = e.height;
  if (e.base)
    copy->base = cloneExpr(*e.base);
  for (const ExprPtr &arg : e.args)
    copy->args.push_back(arg ? cloneExpr(*arg) : nullptr);
  return copy;
}

namespace {

constexpr unsigned kMaxDepth = 256;
constexpr unsigned kMaxHeight = 1024;

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr, const std::vector<Token> &tokens,
         const ErrorFn &report)
      : sourceMgr(sourceMgr), toks(tokens),
        error([this, &report](llvm::SMLoc loc, const llvm::Twine &message) {
          // A trial parse (a device call's template argument) reports
          // nothing: its failure only means the text stays C++.
          return quiet ? false : report(loc, message);
        }) {
    eof.kind = TokKind::Eof;
    eof.loc = tokens.empty() ? SMLoc() : tokens.back().loc;
  }

  bool program(Program &out);

private:
  // Token access.
  const Token &peek(size_t n = 0) const {
    return pos + n < std::min(toks.size(), limit) ? toks[pos + n] : eof;
  }
  const Token &next() {
    return pos < std::min(toks.size(), limit) ? toks[pos++] : eof;
  }
  bool at(StringRef text) const { return peek().is(text); }
  bool accept(StringRef text) {
    if (!at(text))
      return false;
    ++pos;
    return true;
  }
  bool expect(StringRef text, StringRef what = "") {
    if (accept(text))
      return true;
    const Token &tok = peek();
    std::string found = tok.kind == TokKind::Eof ? "end of input"
                                                  : "'" + tok.text + "'";
    return error(tok.loc, "expected '" + text + "'" +
                              (what.empty() ? "" : " " + what) +
                              ", found " + found);
  }
  /// An optional `after f1, f2, ...` into `stmt.after`; false on error.
  bool afterList(Stmt &stmt) {
    if (!accept("after"))
      return true;
    do {
      std::string name;
      if (!expectIdent(name, nullptr, "a future after 'after'"))
        return false;
      stmt.after.push_back(name);
    } while (accept(","));
    return true;
  }

  bool expectIdent(std::string &name, SMLoc *loc = nullptr,
                   StringRef what = "a name") {
    const Token &tok = peek();
    if (!tok.isIdent()) {
      std::string found = tok.kind == TokKind::Eof ? "end of input"
                                                    : "'" + tok.text + "'";
      return error(tok.loc, "expected " + what + ", found " + found);
    }
    name = tok.text;
    if (loc)
      *loc = tok.loc;
    ++pos;
    return true;
  }
  /// `.name` as a member keyword.
  bool acceptMember(StringRef name) {
    if (at(".") && peek(1).is(name)) {
      pos += 2;
      return true;
    }
    return false;
  }
  struct DepthGuard {
    DepthGuard(Parser &p) : p(p) { ++p.depth; }
    ~DepthGuard() { --p.depth; }
    Parser &p;
  };
  bool tooDeep(SMLoc loc) {
    if (depth <= kMaxDepth)
      return false;
    error(loc, "nesting is deeper than " + llvm::Twine(kMaxDepth) + " levels");
    return true;
  }

  /// `__asm__(...)` and `__cpp__("...")` splice text into the kernel that
  /// croq's analyses cannot see: true after reporting one at the next token.
  bool rejectEscapeHatch();
  /// `call name[<targs>](args)`, after `call`: a DeviceCall whose name is
  /// the callee as C++ spells it.
  ExprPtr deviceCall(SMLoc loc);
  /// `__asm__ [volatile] ("template" : outputs : inputs : clobbers);`
  StmtPtr inlineAsm(SMLoc loc);
  /// One or more adjacent string literals, unquoted and joined into `out`;
  /// false after reporting `missing` when there is none.
  bool stringLiterals(std::string &out, const char *missing) {
    if (peek().kind != TokKind::String) {
      error(peek().loc, missing);
      return false;
    }
    while (peek().kind == TokKind::String) {
      if (!unquote(peek().text, out)) {
        error(peek().loc, "unsupported escape in string literal");
        return false;
      }
      next();
    }
    return true;
  }
  bool function(Function &fn);
  bool param(Param &p);
  /// `mdspan<N>`, `[d, ...]`, `mdspan[d, ...]` or `[[d, ...]]`: fills
  /// `dims`, or `rank` for `mdspan<N>`.
  bool shapeType(std::vector<ExprPtr> &dims, int64_t &rank);
  StmtPtr shapeDecl(SMLoc loc);
  bool block(std::vector<StmtPtr> &out);
  bool body(std::vector<StmtPtr> &out);
  StmtPtr statement();
  StmtPtr declaration(SMLoc loc, std::string storage);
  StmtPtr tensorOrScalarDecl(SMLoc loc, const std::string &storage,
                             bool isMutable);
  StmtPtr eventDecl(SMLoc loc, const std::string &storage);
  StmtPtr parallel(SMLoc loc);
  StmtPtr withOrForeach(SMLoc loc, bool isForeach);
  bool within(Within &w);
  StmtPtr dma(SMLoc loc, std::string result, SMLoc resultLoc);
  StmtPtr mma(SMLoc loc, std::string result, SMLoc resultLoc);
  /// `frag[.T] name[d]... {v};`: an accumulator declared with its value.
  StmtPtr accumulatorDecl(SMLoc loc);
  /// `, sa, sb` of mma.row.row.scale and mma.scale: the row scales (a
  /// view) and the tile scale.
  bool mmaScales(Stmt &stmt);
  StmtPtr assignment(SMLoc loc);
  /// A level's name, and `block<cooperative>` where `cooperative` may be
  /// set.
  bool levelName(std::string &level, bool *cooperative = nullptr);
  bool intArg(std::optional<int64_t> &value);
  /// `[d0][d1]...` after a declared name: the array's extents, appended to
  /// `dims`. False after an error.
  bool arrayExtents(std::vector<ExprPtr> &dims);

  /// Sets `e`'s height from its children; false (after an error) when the
  /// tree grows too tall for the recursive passes that follow.
  bool measure(Expr &e) {
    unsigned h = e.base ? e.base->height : 0;
    for (const ExprPtr &arg : e.args)
      if (arg)
        h = std::max(h, arg->height);
    e.height = h + 1;
    if (e.height <= kMaxHeight)
      return true;
    error(e.loc, "expression is nested more than " + llvm::Twine(kMaxHeight) +
                     " levels deep");
    return false;
  }

  ExprPtr expr();
  /// The template arguments of device call `call`, tokens [begin, end).
  void templateArguments(Expr &call, size_t begin, size_t end);
  ExprPtr ternary();
  /// A left-associative chain `operand (op operand)*` over `ops`.
  ExprPtr leftAssoc(llvm::function_ref<ExprPtr()> operand,
                    llvm::ArrayRef<llvm::StringRef> ops);
  ExprPtr binary(int level);
  ExprPtr unary();
  ExprPtr bitwise();
  ExprPtr compose();
  ExprPtr tilde();
  ExprPtr postfix();
  ExprPtr primary();
  bool exprList(std::vector<ExprPtr> &out, StringRef close);

  llvm::SourceMgr &sourceMgr;
  const std::vector<Token> &toks;
  ErrorFn error;
  unsigned quiet = 0;
  /// Tokens from this index on read as the end of input (a trial parse of
  /// one template argument).
  size_t limit = SIZE_MAX;
  Token eof;
  size_t pos = 0;
  unsigned depth = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Program and functions
//===----------------------------------------------------------------------===//

/// Whether `item`, a top-level C++ declaration outside device code, is a
/// host function's definition: a body in braces after a parameter list.
static bool isHostFunctionDefinition(llvm::ArrayRef<const Token *> item) {
  bool parameters = false;
  for (const Token *tok : item) {
    if (tok->is("namespace") || tok->is("struct") || tok->is("class") ||
        tok->is("union") || tok->is("enum") || tok->is("=") ||
        tok->is("__global__") || tok->is("__host__"))
      return false;
    if (tok->is("("))
      parameters = true;
    if (tok->is("{"))
      return parameters;
  }
  return false;
}

/// `using namespace choreo;` (or croq): the host runtime's, which device
/// code does not have.
static bool isRuntimeUsing(llvm::ArrayRef<const Token *> item) {
  return item.size() == 4 && item[0]->is("using") && item[1]->is("namespace") &&
         (item[2]->is("choreo") || item[2]->is("croq")) && item[3]->is(";");
}

/// The main file's text as device C++: the ranges in `blanks` (the __co__
/// functions, host functions) turned into spaces, lines kept, `edits`
/// applied (the braces of `__cok__` blocks), and each
/// quoted #include either pointed at the file croq's preprocessor read or,
/// when it read none (a host runtime header) or one of Croqtile, blanked.
namespace {
/// A replacement in the device C++ text: main-file offsets [begin, end).
struct DeviceEdit {
  size_t begin, end;
  std::string text;
};
} // namespace

static std::string deviceSource(llvm::SourceMgr &sourceMgr,
                                llvm::ArrayRef<std::pair<size_t, size_t>> blanks,
                                llvm::ArrayRef<DeviceEdit> edits) {
  const llvm::MemoryBuffer *main =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::string text = main->getBuffer().str();
  for (auto [begin, end] : blanks)
    for (size_t i = begin; i < end && i < text.size(); ++i)
      if (text[i] != '\n')
        text[i] = ' ';
  // Edits replace a range on one line (so that lines stay where they
  // were), the last first so that earlier offsets hold.
  for (const DeviceEdit &edit : llvm::reverse(edits))
    if (edit.end <= text.size())
      text.replace(edit.begin, edit.end - edit.begin, edit.text);
  // Comments go too (a line comment's newline stays); literals are kept.
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      for (; i < text.size() && text[i] != '\n'; ++i)
        text[i] = ' ';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      end = end == std::string::npos ? text.size() : end + 2;
      for (; i < end; ++i)
        if (text[i] != '\n')
          text[i] = ' ';
      --i;
    }
  }
  std::string out;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef directive = line.ltrim();
    if (directive.consume_front("#") &&
        directive.ltrim().consume_front("include") &&
        directive.ltrim().starts_with("\"")) {
      llvm::StringRef name = directive.ltrim().drop_front().take_until(
          [](char c) { return c == '"'; });
      std::string found;
      for (unsigned id = 1; id <= sourceMgr.getNumBuffers(); ++id) {
        llvm::StringRef path = sourceMgr.getMemoryBuffer(id)->getBufferIdentifier();
        // (A header of __co__ functions is Croqtile, not C++.)
        if (id != sourceMgr.getMainFileID() &&
            (path == name || path.ends_with(("/" + name).str())) &&
            !sourceMgr.getMemoryBuffer(id)->getBuffer().contains("__co__")) {
          llvm::SmallString<256> absolute(path);
          llvm::sys::fs::make_absolute(absolute);
          found = absolute.str().str();
        }
      }
      out += found.empty() ? std::string() : "#include \"" + found + "\"";
      out += '\n';
      continue;
    }
    out += line.str();
    out += '\n';
  }
  return "#line 1 \"" + main->getBufferIdentifier().str() + "\"\n" + out;
}

bool Parser::program(Program &out) {
  const char *hostStart = nullptr, *hostEnd = nullptr;
  auto flushHost = [&]() {
    if (hostStart && hostEnd > hostStart)
      out.hostCode.emplace_back(hostStart, hostEnd);
    hostStart = hostEnd = nullptr;
  };
  // Device C++ is the main file's own text (clang preprocesses it again),
  // less what device code must not see: __co__ functions, host functions.
  unsigned mainId = sourceMgr.getMainFileID();
  const char *mainStart = sourceMgr.getMemoryBuffer(mainId)->getBufferStart();
  const char *mainEnd = sourceMgr.getMemoryBuffer(mainId)->getBufferEnd();
  std::vector<std::pair<size_t, size_t>> blanks;
  std::vector<DeviceEdit> edits;
  auto blank = [&](const Token &first, const Token &last) {
    const char *begin = first.loc.getPointer();
    const char *end = last.loc.getPointer() + last.text.size();
    if (begin >= mainStart && begin < mainEnd && last.loc.getPointer() >= begin &&
        last.loc.getPointer() < mainEnd)
      blanks.emplace_back(begin - mainStart,
                          std::min(end, mainEnd) - mainStart);
  };
  bool anyDevice = false;
  // The top-level C++ declaration being read, and whether it is device code
  // (`__device__` somewhere in it).
  std::vector<const Token *> item;
  int itemDepth = 0;
  bool itemIsDevice = false;
  auto endItem = [&]() {
    if (itemIsDevice)
      anyDevice = true;
    else if (!item.empty() &&
             (isHostFunctionDefinition(item) || isRuntimeUsing(item)))
      blank(*item.front(), *item.back());
    item.clear();
    itemDepth = 0;
    itemIsDevice = false;
  };
  while (peek().kind != TokKind::Eof) {
    // `__cok__ { ... }`: device C++ of the separate-source model, every
    // function in it a device function (clang's force_cuda_host_device
    // makes them __host__ __device__). Not host code.
    if (at("__cok__")) {
      endItem();
      flushHost();
      const Token &keyword = next();
      if (!at("{"))
        return error(peek().loc, "expected '{' after __cok__");
      const Token &open = next();
      const char *begin = keyword.loc.getPointer();
      if (begin < mainStart || begin >= mainEnd ||
          open.loc.getPointer() >= mainEnd)
        return error(keyword.loc, "a __cok__ block must be in the main file, "
                                  "not in a header or a macro");
      if (StringRef(begin, open.loc.getPointer() - begin).contains('\n'))
        return error(keyword.loc, "write `__cok__ {` on one line");
      edits.push_back({static_cast<size_t>(begin - mainStart),
                       static_cast<size_t>(open.loc.getPointer() + 1 - mainStart),
                       "_Pragma(\"clang force_cuda_host_device begin\")"});
      int depth = 1;
      while (depth > 0 && peek().kind != TokKind::Eof) {
        const Token &tok = next();
        if (tok.is("{"))
          ++depth;
        else if (tok.is("}") && --depth == 0)
          edits.push_back(
              {static_cast<size_t>(tok.loc.getPointer() - mainStart),
               static_cast<size_t>(tok.loc.getPointer() + 1 - mainStart),
               "_Pragma(\"clang force_cuda_host_device end\")"});
      }
      if (depth > 0)
        return error(open.loc, "this __cok__ block has no closing '}'");
      anyDevice = true;
      continue;
    }
    if (at("__co__")) {
      endItem();
      flushHost();
      Function fn;
      const Token &first = peek();
      fn.loc = next().loc;
      if (!function(fn))
        return false;
      blank(first, toks[pos - 1]);
      out.functions.push_back(std::move(fn));
      continue;
    }
    // Host C++: kept as text, token by token within one buffer.
    const Token &tok = next();
    item.push_back(&tok);
    itemIsDevice |= tok.is("__device__") || tok.is("__co_device__");
    if (tok.is("{")) {
      ++itemDepth;
    } else if (tok.is("}") && itemDepth > 0) {
      // A definition ends at its closing brace (and a class at the `;`).
      if (--itemDepth == 0 && !at(";"))
        endItem();
    } else if (tok.is(";") && itemDepth == 0) {
      endItem();
    }
    const char *begin = tok.loc.getPointer();
    if (!hostStart || sourceMgr.FindBufferContainingLoc(tok.loc) !=
                          sourceMgr.FindBufferContainingLoc(
                              SMLoc::getFromPointer(hostStart))) {
      flushHost();
      hostStart = begin;
    }
    // A token from a macro expansion sits at its use, with the expansion's
    // text: never reach past the end of the buffer it points into.
    unsigned id = sourceMgr.FindBufferContainingLoc(tok.loc);
    const char *bufferEnd =
        id ? sourceMgr.getMemoryBuffer(id)->getBufferEnd() : begin;
    const char *end =
        begin + std::min<size_t>(tok.text.size(), bufferEnd - begin);
    if (begin >= hostStart)
      hostEnd = std::max(hostEnd ? hostEnd : begin, end);
  }
  endItem();
  flushHost();
  if (anyDevice)
    out.deviceCode = deviceSource(sourceMgr, blanks, edits);
  return true;
}

bool Parser::function(Function &fn) {
  if (accept("void")) {
    fn.returnKind = "void";
  } else if (accept("auto")) {
    fn.returnKind = "auto";
  } else if (at("int") || at("bool")) {
    fn.returnKind = "scalar";
    fn.returnType = next().text;
  } else if (peek().isIdent() && isElementTypeName(peek().text)) {
    fn.returnType = next().text;
    if (at("mdspan") || at("[")) {
      fn.returnKind = "tensor";
      if (!shapeType(fn.returnDims, fn.returnRank))
        return false;
    } else {
      fn.returnKind = "scalar";
    }
  } else if (peek().isIdent() && peek(1).is("(")) {
    // `__co__ f(...)`: no return type, as `auto`.
    fn.returnKind = "auto";
  } else {
    return error(peek().loc, "expected the return type of a __co__ function "
                             "(void, auto, a scalar or a tensor type)");
  }
  if (!expectIdent(fn.name, nullptr, "the function name") ||
      !expect("(", "after the function name"))
    return false;
  if (!accept(")")) {
    do {
      Param p;
      if (!param(p))
        return false;
      fn.params.push_back(std::move(p));
    } while (accept(","));
    if (!expect(")", "after the parameters"))
      return false;
  }
  return block(fn.body);
}

bool Parser::param(Param &p) {
  p.loc = peek().loc;
  if (at("shared") || at("local"))
    return error(p.loc, "a parameter cannot be '" + peek().text +
                            "': only global tensors are passed to __co__ "
                            "functions");
  if (accept("global"))
    p.storage = "global";
  if (accept("stream")) {
    p.kind = "stream";
    return expectIdent(p.name, &p.loc, "the stream parameter name");
  }
  std::string type;
  if (!expectIdent(type, nullptr, "a parameter type"))
    return false;
  // A parameter may be unnamed, as in C++: `__co__ void f(int, bool)`.
  auto name = [&](StringRef what) {
    if (at(",") || at(")"))
      return true;
    return expectIdent(p.name, &p.loc, what);
  };
  if (type == "int" || type == "bool" ||
      (isElementTypeName(type) && !at("[") && !at("mdspan"))) {
    if (!p.storage.empty())
      return error(p.loc, "a scalar parameter cannot be global");
    p.kind = "scalar";
    p.elemType = type;
    return name("the parameter name");
  }
  if (!isElementTypeName(type))
    return error(p.loc, "unknown parameter type '" + type + "'");
  p.kind = "tensor";
  p.elemType = type;
  int64_t rank = -1;
  if (!shapeType(p.dims, rank))
    return false;
  for (int64_t d = 0; d < rank; ++d) {
    auto dim = std::make_unique<Expr>(Expr::Kind::Name, p.loc);
    dim->name = "?";
    p.dims.push_back(std::move(dim));
  }
  p.byRef = accept("&");
  return name("the parameter name");
}

bool Parser::shapeType(std::vector<ExprPtr> &dims, int64_t &rank) {
  bool mdspan = accept("mdspan");
  if (mdspan && accept("<")) {
    std::optional<int64_t> n;
    if (!intArg(n) || !expect(">", "after the mdspan rank"))
      return false;
    if (*n <= 0)
      return error(peek().loc, "an mdspan needs a positive rank");
    rank = *n;
    return true;
  }
  if (!expect("[", mdspan ? "or '<' after mdspan" : "before the tensor dimensions"))
    return false;
  // `[[M, N]]` is the same shape as `[M, N]`.
  bool twice = accept("[");
  do {
    SMLoc loc = peek().loc;
    if (accept("?")) {
      auto dim = std::make_unique<Expr>(Expr::Kind::Name, loc);
      dim->name = "?";
      dims.push_back(std::move(dim));
      continue;
    }
    ExprPtr dim = expr();
    if (!dim)
      return false;
    dims.push_back(std::move(dim));
  } while (accept(","));
  if (twice && !expect("]", "after the tensor dimensions"))
    return false;
  return expect("]", "after the tensor dimensions");
}

bool Parser::block(std::vector<StmtPtr> &out) {
  DepthGuard guard(*this);
  if (tooDeep(peek().loc) || !expect("{"))
    return false;
  while (!accept("}")) {
    if (peek().kind == TokKind::Eof)
      return error(peek().loc, "expected '}' before the end of input");
    StmtPtr stmt = statement();
    if (!stmt)
      return false;
    out.push_back(std::move(stmt));
  }
  return true;
}

/// A braced block, a single statement, or `;`.
bool Parser::body(std::vector<StmtPtr> &out) {
  if (at("{"))
    return block(out);
  if (accept(";"))
    return true;
  DepthGuard guard(*this);
  if (tooDeep(peek().loc))
    return false;
  StmtPtr stmt = statement();
  if (!stmt)
    return false;
  out.push_back(std::move(stmt));
  return true;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Parser::levelName(std::string &level, bool *cooperative) {
  SMLoc loc = peek().loc;
  std::string name;
  if (!expectIdent(name, nullptr, "a parallel level"))
    return false;
  if (name != "cluster" && name != "block" && name != "group-4" &&
      name != "group" && name != "thread")
    return error(loc, "unknown parallel level '" + name +
                          "'; expected cluster, block, group-4, group or "
                          "thread");
  if (at("<")) {
    SMLoc at = peek(1).loc;
    if (!cooperative || name != "block" || !peek(1).is("cooperative") ||
        !peek(2).is(">"))
      return error(at, "the only level qualifier is <cooperative>, of a "
                       "parallel's block level");
    next();
    next();
    next();
    *cooperative = true;
  }
  level = name;
  return true;
}

bool Parser::intArg(std::optional<int64_t> &value) {
  // Inside <...> a full expression would swallow the closing '>'.
  ExprPtr e = primary();
  if (!e)
    return false;
  if (e->kind == Expr::Kind::Name)
    return error(e->loc, "'" + e->name + "' is not a constant here; "
                         "#define it or write the number");
  // A parenthesized expression of literals (`.swiz<(BK * 2)>` from a
  // #define) is its value.
  std::optional<int64_t> folded = foldConstant(*e);
  if (!folded) {
    // Say why a constant expression has no value.
    std::function<const Expr *(const Expr &)> zeroDivisor =
        [&](const Expr &x) -> const Expr * {
      for (const ExprPtr &arg : x.args)
        if (const Expr *found = arg ? zeroDivisor(*arg) : nullptr)
          return found;
      if (x.kind == Expr::Kind::Binary && (x.name == "/" || x.name == "%") &&
          foldConstant(*x.args[1]) == 0)
        return &x;
      return nullptr;
    };
    if (const Expr *division = zeroDivisor(*e))
      return error(division->loc, "division by zero: the divisor of '" +
                                      division->name + "' is 0");
    return error(e->loc, "expected an integer constant");
  }
  value = *folded;
  return true;
}

StmtPtr Parser::statement() {
  // `[[launch_bounds(256, 2)]] parallel ...`: attributes of the statement.
  if (at("[") && peek(1).is("[")) {
    std::vector<StmtAttribute> attributes;
    while (at("[") && peek(1).is("[")) {
      pos += 2;
      do {
        StmtAttribute attr;
        attr.loc = peek().loc;
        if (!expectIdent(attr.name, nullptr, "an attribute name"))
          return nullptr;
        if (accept("(") && !exprList(attr.args, ")"))
          return nullptr;
        attributes.push_back(std::move(attr));
      } while (accept(","));
      if (!expect("]") || !expect("]", "closing the attributes"))
        return nullptr;
    }
    StmtPtr stmt = statement();
    if (!stmt)
      return nullptr;
    for (StmtAttribute &attr : attributes)
      stmt->attributes.push_back(std::move(attr));
    return stmt;
  }
  SMLoc loc = peek().loc;
  const Token &tok = peek();
  if (tok.is("{")) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Block, loc);
    if (!block(stmt->body))
      return nullptr;
    return stmt;
  }
  if (tok.is(";")) {
    next();
    return std::make_unique<Stmt>(Stmt::Kind::Block, loc);
  }
  if (tok.is("parallel")) {
    next();
    return parallel(loc);
  }
  if (tok.is("with")) {
    next();
    return withOrForeach(loc, false);
  }
  if (tok.is("foreach")) {
    next();
    return withOrForeach(loc, true);
  }
  if (tok.is("inthreads")) {
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::InThreads, loc);
    stmt->async = acceptMember("async");
    if (!expect("(", "after inthreads") || !(stmt->value = expr()) ||
        !expect(")") || !body(stmt->body))
      return nullptr;
    return stmt;
  }
  if (tok.is("if") || tok.is("while")) {
    bool isIf = tok.is("if");
    next();
    auto stmt = std::make_unique<Stmt>(isIf ? Stmt::Kind::If : Stmt::Kind::While,
                                       loc);
    if (!expect("(") || !(stmt->value = expr()) || !expect(")") ||
        !body(stmt->body))
      return nullptr;
    if (isIf && accept("else")) {
      stmt->hasElse = true;
      if (!body(stmt->elseBody))
        return nullptr;
    }
    return stmt;
  }
  if (tok.is("yield") && peek(1).is(";")) {
    next();
    next();
    return std::make_unique<Stmt>(Stmt::Kind::Yield, loc);
  }
  if (tok.is("break") || tok.is("continue")) {
    next();
    auto stmt = std::make_unique<Stmt>(
        tok.is("break") ? Stmt::Kind::Break : Stmt::Kind::Continue, loc);
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  if (tok.is("return")) {
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Return, loc);
    if (!at(";") && !(stmt->value = expr()))
      return nullptr;
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  if (tok.is("mdspan") || tok.is("ituple") ||
      (tok.isIdent() && peek(1).is(":") && !isElementTypeName(tok.text)))
    return shapeDecl(loc);
  if (tok.is("global") || tok.is("shared") || tok.is("local")) {
    std::string storage = next().text;
    return declaration(loc, storage);
  }
  // `frag T[dims] name [{v}], ...;`: a register tile (not `frag name {v}`,
  // an MMA accumulator).
  if (tok.is("frag") && peek(1).isIdent() && isElementTypeName(peek(1).text)) {
    next();
    StmtPtr stmt = tensorOrScalarDecl(loc, "frag", false);
    if (stmt && stmt->kind != Stmt::Kind::TensorDecl) {
      error(loc, "a frag has dimensions: frag T[d0, d1] name;");
      return nullptr;
    }
    return stmt;
  }
  // `frag[.T] name[d0][d1]... {v};`: an accumulator (upstream's declared
  // form of `name = mma.fill[.T] v;`), or an array of them.
  if (tok.is("frag") &&
      ((peek(1).is(".") && peek(2).isIdent() &&
        isElementTypeName(peek(2).text)) ||
       (peek(1).isIdent() && (peek(2).is("[") || peek(2).is("{")))))
    return accumulatorDecl(loc);
  // `apply {i, j} in x.span body`: each element of a register tile.
  if (tok.is("apply") && peek(1).is("{")) {
    next();
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Apply, loc);
    do {
      auto name = std::make_unique<Expr>(Expr::Kind::Name, peek().loc);
      if (!expectIdent(name->name, nullptr, "an index name"))
        return nullptr;
      stmt->operands.push_back(std::move(name));
    } while (accept(","));
    if (!expect("}") || !expect("in", "after apply's indices") ||
        !(stmt->source = postfix()) || !body(stmt->body))
      return nullptr;
    return stmt;
  }
  if (tok.is("event") || tok.is("mutable") || tok.is("int") ||
      tok.is("bool") || (tok.isIdent() && isElementTypeName(tok.text) &&
                         (peek(1).is("[") || peek(1).isIdent())))
    return declaration(loc, "");
  if (tok.is("stream") && peek(1).isIdent()) {
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::StreamDecl, loc);
    if (!expectIdent(stmt->name, &stmt->nameLoc) || !expect(";"))
      return nullptr;
    return stmt;
  }
  if ((tok.is("dma") || tok.is("tma")) && peek(1).is("."))
    return dma(loc, "", SMLoc());
  if (tok.is("mma") && peek(1).is("."))
    return mma(loc, "", SMLoc());
  if (tok.is("wait") || tok.is("trigger")) {
    bool isWait = tok.is("wait");
    next();
    auto stmt = std::make_unique<Stmt>(
        isWait ? Stmt::Kind::Wait : Stmt::Kind::Trigger, loc);
    // trigger.cluster e: arrive on e in every block of the cluster.
    if (!isWait && at(".") && peek(1).is("cluster")) {
      next();
      next();
      stmt->cluster = true;
    }
    do {
      ExprPtr target = postfix();
      if (!target)
        return nullptr;
      stmt->operands.push_back(std::move(target));
    } while (accept(","));
    if (!isWait && !stmt->cluster && !afterList(*stmt))
      return nullptr;
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  if (tok.is("swap") || tok.is("rotate")) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Swap, loc);
    stmt->op = next().text;
    bool paren = accept("(");
    do {
      ExprPtr operand = primary();
      if (!operand)
        return nullptr;
      stmt->operands.push_back(std::move(operand));
    } while (accept(","));
    if ((paren && !expect(")")) || !expect(";"))
      return nullptr;
    return stmt;
  }
  if (tok.is("__asm__") || tok.is("asm") || tok.is("__asm"))
    return inlineAsm(loc);
  if (tok.is("__cpp__") && peek(1).is("(")) {
    // __cpp__("C++ statements"): device code of its own (see IRGen::cpp).
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Cpp, loc);
    next();
    next();
    if (!stringLiterals(stmt->cxx, "__cpp__ takes a string literal of C++ code"))
      return nullptr;
    if (!expect(")") || !expect(";"))
      return nullptr;
    return stmt;
  }
  if ((tok.is("print") || tok.is("println")) &&
      (peek(1).is("(") || (peek(1).is("!") && peek(2).is("(")))) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Print, loc);
    stmt->newline = next().is("println");
    stmt->isStatic = accept("!");
    next();
    if (!exprList(stmt->operands, ")") || !expect(";"))
      return nullptr;
    return stmt;
  }
  if (tok.is("assert") && peek(1).is("(")) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Assert, loc);
    next();
    next();
    if (!(stmt->value = expr()))
      return nullptr;
    if (accept(",") && !(stmt->source = expr()))
      return nullptr;
    if (stmt->source && stmt->source->kind != Expr::Kind::String) {
      error(stmt->source->loc, "the message of assert must be a string literal");
      return nullptr;
    }
    if (!expect(")") || !expect(";"))
      return nullptr;
    return stmt;
  }
  if (tok.is("sync") && peek(1).is(".")) {
    next();
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Sync, loc);
    if (!expectIdent(stmt->op, nullptr, "shared, global, barrier or fence"))
      return nullptr;
    if (stmt->op == "barrier" || stmt->op == "fence") {
      if (!expect(":") || !levelName(stmt->layout))
        return nullptr;
    } else if (stmt->op != "shared" && stmt->op != "global") {
      error(loc, "unknown synchronisation 'sync." + stmt->op + "'");
      return nullptr;
    }
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  return assignment(loc);
}

bool Parser::rejectEscapeHatch() {
  // Inline assembly is a statement of its own (Parser::inlineAsm); in an
  // expression it has no value.
  const Token &tok = peek();
  if (!(tok.is("__asm__") || tok.is("asm") || tok.is("__asm")))
    return false;
  error(tok.loc, "inline assembly is a statement, not a value");
  return true;
}

StmtPtr Parser::inlineAsm(SMLoc loc) {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::Asm, loc);
  next(); // __asm__ / asm / __asm
  while (at("volatile") || at("__volatile__") || at("goto") || at("inline")) {
    const Token &q = next();
    if (q.is("goto")) {
      error(q.loc, "__asm__ goto is not supported: a kernel's control flow "
                   "stays in Croqtile");
      return nullptr;
    }
    stmt->isVolatile |= !q.is("inline");
  }
  if (!expect("(", "after __asm__"))
    return nullptr;
  if (!stringLiterals(stmt->cxx, "invalid __asm__ syntax: expected the "
                                 "assembly template, a string literal"))
    return nullptr;
  // `: outputs : inputs : clobbers`, each section optional.
  auto operands = [&](std::vector<AsmOperand> &out) -> bool {
    if (at(":") || at(")") || at("::"))
      return true;
    do {
      AsmOperand operand;
      operand.loc = peek().loc;
      if (accept("[")) {
        if (!expectIdent(operand.name, nullptr, "an operand name") ||
            !expect("]"))
          return false;
      }
      if (peek().kind != TokKind::String ||
          !unquote(peek().text, operand.constraint)) {
        error(peek().loc, "invalid __asm__ syntax: expected an operand "
                          "constraint string (\"r\", \"=r\", ...)");
        return false;
      }
      next();
      if (!expect("(", "after the constraint") ||
          !(operand.value = expr()) || !expect(")"))
        return false;
      out.push_back(std::move(operand));
    } while (accept(","));
    return true;
  };
  int sections = 0;
  while (at(":") || at("::")) {
    // `::` is two empty-or-not section separators in a row.
    int colons = next().is("::") ? 2 : 1;
    for (int c = 0; c < colons; ++c) {
      ++sections;
      if (sections > 3) {
        error(peek().loc, "invalid __asm__ syntax: at most three sections "
                          "(outputs, inputs, clobbers) follow the template");
        return nullptr;
      }
      if (c + 1 < colons)
        continue;
      if (sections == 1 && !operands(stmt->asmOutputs))
        return nullptr;
      if (sections == 2 && !operands(stmt->asmInputs))
        return nullptr;
      if (sections == 3 && !(at(":") || at(")"))) {
        do {
          std::string clobber;
          if (peek().kind != TokKind::String ||
              !unquote(peek().text, clobber)) {
            error(peek().loc, "invalid __asm__ syntax: a clobber is a string");
            return nullptr;
          }
          next();
          stmt->asmClobbers.push_back(clobber);
        } while (accept(","));
      }
    }
  }
  if (!expect(")", "to close __asm__") || !expect(";"))
    return nullptr;
  return stmt;
}

/// `mdspan[<N>] name : shape;`, `name : shape;` or `ituple[<N>] name = t;`.
StmtPtr Parser::shapeDecl(SMLoc loc) {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::ShapeDecl, loc);
  bool ituple = false;
  if (at("mdspan") || at("ituple")) {
    ituple = next().text == "ituple";
    if (accept("<")) {
      std::optional<int64_t> n;
      if (!intArg(n) || !expect(">"))
        return nullptr;
      stmt->rank = *n;
    }
  }
  if (!expectIdent(stmt->name, &stmt->nameLoc, "a name"))
    return nullptr;
  if (!expect(ituple ? "=" : ":", ituple ? "to initialise an ituple"
                                         : "to initialise an mdspan"))
    return nullptr;
  if (!(stmt->value = expr()) || !expect(";"))
    return nullptr;
  return stmt;
}

StmtPtr Parser::declaration(SMLoc loc, std::string storage) {
  if (at("event")) {
    next();
    return eventDecl(loc, storage);
  }
  bool isMutable = accept("mutable");
  return tensorOrScalarDecl(loc, storage, isMutable);
}

StmtPtr Parser::eventDecl(SMLoc loc, const std::string &storage) {
  std::optional<int64_t> arrivals;
  if (accept("<")) {
    if (!intArg(arrivals) || !expect(">"))
      return nullptr;
  }
  auto first = std::make_unique<Stmt>(Stmt::Kind::EventDecl, loc);
  Stmt *current = first.get();
  while (true) {
    current->storage = storage;
    current->arrivals = arrivals;
    if (!expectIdent(current->name, &current->nameLoc, "an event name"))
      return nullptr;
    if (!arrayExtents(current->arrayDims))
      return nullptr;
    if (accept("=")) {
      if (!accept("ready")) {
        error(peek().loc, "an event can only be initialised with 'ready'");
        return nullptr;
      }
      current->ready = true;
    }
    if (!accept(","))
      break;
    first->moreDecls.push_back(
        std::make_unique<Stmt>(Stmt::Kind::EventDecl, peek().loc));
    current = first->moreDecls.back().get();
  }
  if (!expect(";"))
    return nullptr;
  return first;
}

StmtPtr Parser::tensorOrScalarDecl(SMLoc loc, const std::string &storage,
                                   bool isMutable) {
  // `mutable x = v;`: the type is the initializer's.
  if (isMutable && peek().isIdent() && peek(1).is("=")) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::ScalarDecl, loc);
    stmt->isMutable = true;
    stmt->storage = storage;
    if (!expectIdent(stmt->name, &stmt->nameLoc) || !expect("=") ||
        !(stmt->value = expr()) || !expect(";"))
      return nullptr;
    return stmt;
  }
  std::string type;
  SMLoc typeLoc = peek().loc;
  if (!expectIdent(type, nullptr, "a type"))
    return nullptr;
  if (type != "int" && type != "bool" && !isElementTypeName(type)) {
    error(typeLoc, "unknown type '" + type + "'");
    return nullptr;
  }
  std::vector<ExprPtr> dims;
  bool isTensor = false;
  if (accept("[")) {
    isTensor = true;
    if (!exprList(dims, "]"))
      return nullptr;
  }
  if (isTensor && isMutable) {
    error(loc, "'mutable' applies to scalars only");
    return nullptr;
  }
  auto first = std::make_unique<Stmt>(
      isTensor ? Stmt::Kind::TensorDecl : Stmt::Kind::ScalarDecl, loc);
  Stmt *current = first.get();
  while (true) {
    current->storage = storage;
    current->elemType = type;
    current->isMutable = isMutable;
    if (current == first.get())
      current->dims = std::move(dims);
    else if (isTensor)
      // Later declarators share the first one's dimensions.
      for (const ExprPtr &d : first->dims)
        current->dims.push_back(cloneExpr(*d));
    if (!expectIdent(current->name, &current->nameLoc, "a name"))
      return nullptr;
    if (isTensor && !arrayExtents(current->arrayDims))
      return nullptr;
    if (accept("=")) {
      if (isTensor) {
        error(peek().loc, "tensors cannot be initialised in a declaration");
        return nullptr;
      }
      if (!(current->value = expr()))
        return nullptr;
    } else if (isTensor && accept("{")) {
      if (!(current->value = expr()) || !expect("}"))
        return nullptr;
    }
    if (!accept(","))
      break;
    first->moreDecls.push_back(std::make_unique<Stmt>(first->kind, peek().loc));
    current = first->moreDecls.back().get();
  }
  if (!expect(";"))
    return nullptr;
  return first;
}

StmtPtr Parser::parallel(SMLoc loc) {
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::Parallel, loc);
  stmt->async = acceptMember("async");
  if (accept("<")) {
    if (!expectIdent(stmt->streamName, nullptr, "a stream name") ||
        !expect(">"))
      return nullptr;
  } else if (at("(") && peek(1).isIdent() && peek(2).is(")")) {
    // The older `parallel(s)` spelling of a stream binding.
    next();
    stmt->streamName = next().text;
    next();
  }
  do {
    ParallelLevel level;
    level.loc = peek().loc;
    if (peek().isIdent() && peek(1).is("=") && peek(2).is("{")) {
      level.tupleName = peek().text;
      level.tupleLoc = peek().loc;
      pos += 2;
    }
    if (accept("{")) {
      do {
        std::string name;
        SMLoc nameLoc;
        if (!expectIdent(name, &nameLoc, "an index name"))
          return nullptr;
        level.names.push_back(name);
        level.nameLocs.push_back(nameLoc);
      } while (accept(","));
      if (!expect("}") || !expect("by") || !expect("["))
        return nullptr;
      if (!exprList(level.bounds, "]"))
        return nullptr;
    } else {
      if (peek().isIdent() && !at("by")) {
        level.names.push_back(peek().text);
        level.nameLocs.push_back(peek().loc);
        next();
      }
      if (!expect("by", "in a parallel level"))
        return nullptr;
      ExprPtr bound = expr();
      if (!bound)
        return nullptr;
      level.bounds.push_back(std::move(bound));
    }
    if (accept(":") && !levelName(level.level, &level.cooperative))
      return nullptr;
    stmt->levels.push_back(std::move(level));
  } while (accept(","));
  if (!body(stmt->body))
    return nullptr;
  auto cluster = llvm::find_if(stmt->levels, [](const ParallelLevel &l) {
    return l.level == "cluster";
  });
  if (cluster == stmt->levels.end())
    return stmt;
  // `parallel {r} by [C] : cluster { parallel ... : block { ... } }`: the
  // cluster level folds into the block-level parallel it holds.
  if (stmt->levels.size() != 1 || stmt->async || !stmt->streamName.empty()) {
    error(cluster->loc, "a cluster level stands alone: write "
                               "`parallel {r} by [C] : cluster { parallel "
                               "... : block { ... } }`");
    return nullptr;
  }
  if (cluster->bounds.size() != 1) {
    error(cluster->loc, "a cluster has one extent, along the block "
                               "level's first index: `parallel {r} by [C] : "
                               "cluster`");
    return nullptr;
  }
  if (stmt->body.size() != 1 || stmt->body[0]->kind != Stmt::Kind::Parallel ||
      stmt->body[0]->clusterLevel) {
    error(cluster->loc, "the body of a cluster level is the block-level "
                               "parallel it groups, and nothing else");
    return nullptr;
  }
  StmtPtr inner = std::move(stmt->body[0]);
  inner->clusterLevel = std::move(*cluster);
  return inner;
}

bool Parser::within(Within &w) {
  w.loc = peek().loc;
  if (peek().isIdent() && peek(1).is("=") && peek(2).is("{")) {
    w.tupleName = peek().text;
    w.tupleLoc = peek().loc;
    if (w.tupleName == "_")
      return error(w.tupleLoc, "'_' cannot name an index tuple; it only "
                               "stands for a whole dimension in chunkat and "
                               "subspan");
    pos += 2;
  }
  auto indexName = [&]() {
    std::string name;
    SMLoc at = peek().loc;
    if (!expectIdent(name, nullptr, "an index name"))
      return false;
    if (name == "_")
      return error(at, "'_' cannot name a with or foreach index; it only "
                       "stands for a whole dimension in chunkat and subspan");
    w.names.push_back(name);
    return true;
  };
  if (accept("{")) {
    do {
      if (!indexName())
        return false;
    } while (accept(","));
    if (!expect("}"))
      return false;
  } else if (!indexName()) {
    return false;
  }
  if (!expect("in"))
    return false;
  if (at("|"))
    return error(peek().loc, "expected the bounds after 'in': [a, b], x.span "
                             "or an mdspan name; |x| is a count, not a shape");
  if (accept("[")) {
    if (!exprList(w.bounds, "]"))
      return false;
  } else {
    ExprPtr bound = expr();
    if (!bound)
      return false;
    w.bounds.push_back(std::move(bound));
  }
  return true;
}

StmtPtr Parser::withOrForeach(SMLoc loc, bool isForeach) {
  auto stmt = std::make_unique<Stmt>(
      isForeach ? Stmt::Kind::Foreach : Stmt::Kind::With, loc);
  do {
    // foreach over an existing bounded name: `foreach k`, `foreach k(1:)`,
    // `foreach c = k(1:)` (c the body's name for it), and `foreach k stmt`.
    bool alias = isForeach && peek().isIdent() && peek(1).is("=") &&
                 peek(2).isIdent() && peek(3).is("(");
    bool isRange = isForeach && peek().isIdent() &&
                   (alias || (!peek(1).is("in") && !peek(1).is("=")));
    if (isRange) {
      auto range = std::make_unique<Expr>(Expr::Kind::Range, peek().loc);
      if (alias) {
        range->alias = next().text;
        next();
      }
      range->name = next().text;
      if (accept("(")) {
        for (int part = 0; part < 3; ++part) {
          if (at(":") || at(")")) {
            range->args.push_back(nullptr);
          } else {
            ExprPtr e = expr();
            if (!e)
              return nullptr;
            range->args.push_back(std::move(e));
          }
          if (part < 2 && !accept(":"))
            break;
        }
        if (!expect(")"))
          return nullptr;
      }
      stmt->ranges.push_back(std::move(range));
      continue;
    }
    Within w;
    if (!within(w))
      return nullptr;
    stmt->withins.push_back(std::move(w));
  } while (accept(","));
  // `with ... where a <-> b, c <-> d`: a names the same variable as b.
  if (!isForeach && accept("where")) {
    do {
      WhereBinding binding;
      binding.loc = peek().loc;
      if (!expectIdent(binding.alias, nullptr, "a bounded variable") ||
          !expect("<", "in `where a <-> b`") ||
          !expect("->", "in `where a <-> b`") ||
          !expectIdent(binding.target, nullptr, "a bounded variable"))
        return nullptr;
      stmt->whereBindings.push_back(std::move(binding));
    } while (accept(","));
  }
  // `foreach i ... if (cond) body`: the iterations where cond holds.
  if (isForeach && accept("if")) {
    if (!expect("(", "after foreach ... if") || !(stmt->mask = expr()) ||
        !expect(")"))
      return nullptr;
  }
  if (isForeach && accept(":")) {
    // Loop attributes: unroll(n) unrolls the loop (croq-unroll-hinted-loops);
    // vectorize is a hint, checked here and left to LLVM.
    do {
      std::string attr;
      SMLoc attrLoc = peek().loc;
      if (!expectIdent(attr, nullptr, "a foreach attribute"))
        return nullptr;
      if (attr != "unroll" && attr != "vectorize") {
        error(attrLoc, "unknown foreach attribute '" + attr +
                           "'; expected unroll or vectorize");
        return nullptr;
      }
      if (accept("(")) {
        std::vector<ExprPtr> args;
        if (!exprList(args, ")"))
          return nullptr;
        // vectorize(i, 4) names the loop index it applies to.
        if (attr == "vectorize" && args.size() == 2) {
          if (args[0]->kind != Expr::Kind::Name) {
            error(args[0]->loc, "vectorize(i, n) names a loop index first");
            return nullptr;
          }
          stmt->vectorizeIndex = args.front().get();
          stmt->operands.push_back(std::move(args.front()));
          args.erase(args.begin());
        }
        // unroll(n) takes a constant expression (a #define of one), which
        // IRGen evaluates; a vectorize width is a literal.
        if (attr == "unroll") {
          if (args.size() != 1) {
            error(attrLoc, "unroll takes one factor: unroll(n)");
            return nullptr;
          }
          stmt->unroll = args.front().get();
          stmt->operands.push_back(std::move(args.front()));
          args.clear();
        }
        for (const ExprPtr &arg : args)
          if (arg->kind != Expr::Kind::Int || arg->intValue <= 0) {
            error(arg->loc, attr + " factor must be a positive integer");
            return nullptr;
          }
      }
    } while (accept(","));
  }
  if (!body(stmt->body))
    return nullptr;
  return stmt;
}

StmtPtr Parser::dma(SMLoc loc, std::string result, SMLoc resultLoc) {
  std::string engine = next().text; // dma / tma
  if (acceptMember("any")) {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::DmaAny, loc);
    stmt->op = engine;
    stmt->name = result;
    stmt->nameLoc = resultLoc;
    if (result.empty()) {
      error(loc, engine + ".any makes a placeholder future; name it, as "
                          "`f = " + engine + ".any;`");
      return nullptr;
    }
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::Dma, loc);
  stmt->op = engine;
  stmt->name = result;
  stmt->nameLoc = resultLoc;
  if (!expect(".") || !expectIdent(stmt->copyKind, nullptr, "copy or load"))
    return nullptr;
  if (engine == "dma" && stmt->copyKind == "transp") {
    // dma.transp<p0, p1, ...>: the permutation of the source's dimensions.
    if (!expect("<", "after dma.transp"))
      return nullptr;
    do {
      std::optional<int64_t> d;
      if (!intArg(d))
        return nullptr;
      stmt->permutation.push_back(*d);
    } while (accept(","));
    if (!expect(">"))
      return nullptr;
  } else if (engine == "dma" && stmt->copyKind == "pad") {
    // dma.pad<{low...}, {high...}, {mid...}, value>.
    if (!expect("<", "after dma.pad"))
      return nullptr;
    for (std::vector<int64_t> *widths :
         {&stmt->padLow, &stmt->padHigh, &stmt->padMid}) {
      if (!expect("{", "to open dma.pad's paddings"))
        return nullptr;
      do {
        std::optional<int64_t> w;
        if (!intArg(w))
          return nullptr;
        widths->push_back(*w);
      } while (accept(","));
      if (!expect("}") || !expect(","))
        return nullptr;
    }
    // A unary expression: a full one would read the closing ">" as a
    // comparison.
    if (!(stmt->padValue = unary()) || !expect(">"))
      return nullptr;
  } else if (stmt->copyKind != "copy" &&
             !(engine == "tma" && stmt->copyKind == "load")) {
    error(loc, engine + "." + stmt->copyKind + " is not supported; use " +
                   engine + ".copy");
    return nullptr;
  }
  while (at(".")) {
    SMLoc attrLoc = peek(1).loc;
    next();
    std::string attr;
    if (!expectIdent(attr, nullptr, "a copy attribute"))
      return nullptr;
    if (attr == "async") {
      stmt->async = true;
      if (accept("<")) {
        if (!(stmt->boundEvent = postfix()) || !expect(">"))
          return nullptr;
      }
    } else if (attr == "swiz") {
      stmt->swizzle = 128;
      if (accept("<")) {
        std::optional<int64_t> value;
        if (!intArg(value) || !expect(">"))
          return nullptr;
        stmt->swizzle = value;
      }
    } else if (attr == "multicast") {
      if (engine != "tma") {
        error(attrLoc, "only a TMA copy can be multicast: write "
                       "tma.copy.multicast");
        return nullptr;
      }
      stmt->multicast = true;
    } else if (attr == "zfill") {
      // croq's copies always read out-of-range elements as zeros.
    } else if (attr == "evict_first" || attr == "evict_last") {
      // Upstream: "TMA L2 eviction modifiers are only valid on 'tma.load'".
      if (engine != "tma" || stmt->copyKind != "load") {
        error(attrLoc, "the L2 eviction hint '." + attr + "' only applies "
                       "to tma.load (a global tile loaded into shared "
                       "memory); write tma.load." + attr);
        return nullptr;
      }
      stmt->ignoredHints.emplace_back(attrLoc, attr);
    } else {
      error(attrLoc, "unsupported copy attribute '." + attr + "'");
      return nullptr;
    }
  }
  if (!(stmt->source = postfix()) || !expect("=>", "between source and destination"))
    return nullptr;
  if (at("shared") || at("local") || at("global")) {
    stmt->destStorage = next().text;
  } else if (!(stmt->dest = postfix())) {
    return nullptr;
  }
  if (!afterList(*stmt))
    return nullptr;
  if (!expect(";"))
    return nullptr;
  return stmt;
}

bool Parser::arrayExtents(std::vector<ExprPtr> &dims) {
  while (accept("[")) {
    ExprPtr dim = expr();
    if (!dim || !expect("]"))
      return false;
    dims.push_back(std::move(dim));
  }
  return true;
}

StmtPtr Parser::accumulatorDecl(SMLoc loc) {
  next(); // frag
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::MmaFill, loc);
  if (accept("."))
    stmt->elemType = next().text;
  if (!expectIdent(stmt->name, &stmt->nameLoc, "an accumulator name"))
    return nullptr;
  if (!arrayExtents(stmt->arrayDims) ||
      !expect("{", "before the accumulator's initial value") ||
      !(stmt->value = expr()) || !expect("}") || !expect(";"))
    return nullptr;
  return stmt;
}

StmtPtr Parser::mma(SMLoc loc, std::string result, SMLoc resultLoc) {
  next(); // mma
  if (!expect("."))
    return nullptr;
  std::string what;
  SMLoc whatLoc = peek().loc;
  if (!expectIdent(what, nullptr, "an mma operation"))
    return nullptr;
  auto need = [&](bool named) -> bool {
    if (named && result.empty())
      return error(loc, "mma." + what + " produces a fragment; name it, as "
                                       "`x = mma." + what + " ...;`");
    return true;
  };
  if (what == "fill") {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::MmaFill, loc);
    stmt->name = result;
    stmt->nameLoc = resultLoc;
    if (at(".") && peek(1).isIdent() && isElementTypeName(peek(1).text)) {
      next();
      stmt->elemType = next().text;
    }
    // `mma.fill acc, v;` (re)fills the fragment `acc`; `mma.fill
    // acc[i][j], v;` an element of an array of them.
    if (result.empty() && peek().isIdent() &&
        (peek(1).is(",") || peek(1).is("["))) {
      stmt->nameLoc = peek().loc;
      stmt->name = result = peek().text;
      stmt->refill = true;
      if (peek(1).is("[")) {
        if (!(stmt->target = postfix()))
          return nullptr;
      } else {
        next();
      }
      if (!expect(","))
        return nullptr;
    }
    if (!need(true) || !(stmt->value = expr()) || !expect(";"))
      return nullptr;
    return stmt;
  }
  if (what == "load") {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::MmaLoad, loc);
    stmt->name = result;
    stmt->nameLoc = resultLoc;
    while (at(".") && (peek(1).is("swiz") || peek(1).is("frag"))) {
      next();
      if (next().text == "swiz") {
        stmt->swizzle = 128;
        if (accept("<")) {
          std::optional<int64_t> value;
          if (!intArg(value) || !expect(">"))
            return nullptr;
          stmt->swizzle = value;
        }
      }
    }
    // `mma.load src, frag;` loads into an existing register tile.
    if (result.empty()) {
      if (!(stmt->source = postfix()))
        return nullptr;
      if (!accept(",")) {
        need(true);
        return nullptr;
      }
      if (!expectIdent(stmt->name, &stmt->nameLoc, "the frag to load into") ||
          !expect(";"))
        return nullptr;
      stmt->refill = true;
      return stmt;
    }
    if (!(stmt->source = postfix()) || !expect(";"))
      return nullptr;
    return stmt;
  }
  if (what == "store") {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::MmaStore, loc);
    bool mask = false;
    for (;;) {
      SMLoc modifier = peek(1).loc;
      if (acceptMember("transp")) {
        stmt->transpose = true;
        continue;
      }
      if (acceptMember("mask")) {
        mask = true;
        continue;
      }
      if (acceptMember("async")) {
        // Made synchronously, which an async store allows; IRGen says so.
        stmt->ignoredHints.emplace_back(modifier, "async");
        continue;
      }
      break;
    }
    ExprPtr acc = postfix();
    if (!acc || !expect(",") || !(stmt->dest = postfix()))
      return nullptr;
    stmt->operands.push_back(std::move(acc));
    // mma.store.mask acc, view, rows[, cols]
    if (mask) {
      if (!expect(",", "before the valid rows of mma.store.mask"))
        return nullptr;
      do {
        ExprPtr guard = expr();
        if (!guard)
          return nullptr;
        stmt->operands.push_back(std::move(guard));
      } while (stmt->operands.size() < 3 && accept(","));
    }
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  if (what == "commit" || what == "wait") {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::MmaCommit, loc);
    stmt->op = what;
    if (what == "wait") {
      std::optional<int64_t> pending;
      if (!expect("<") || !intArg(pending) || !expect(">"))
        return nullptr;
      stmt->arrivals = pending;
    }
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  if (what == "row" || what == "col") {
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Mma, loc);
    stmt->name = result;
    stmt->nameLoc = resultLoc;
    std::string second;
    if (!expect(".") || !expectIdent(second, nullptr, "row or col"))
      return nullptr;
    if (second != "row" && second != "col") {
      error(whatLoc, "expected an MMA layout row.row, row.col, col.row or "
                     "col.col");
      return nullptr;
    }
    stmt->layout = what + "_" + second;
    SMLoc sparseLoc = peek(1).loc;
    bool sparse = acceptMember("sp");
    stmt->async = acceptMember("async");
    if (sparse && stmt->async) {
      error(sparseLoc, "a sparse MMA is synchronous: drop .async");
      return nullptr;
    }
    SMLoc scaleLoc = peek(1).loc;
    bool scaled = acceptMember("scale");
    if (scaled && stmt->async) {
      error(scaleLoc, "a block-scaled MMA is synchronous: drop .async");
      return nullptr;
    }
    if (stmt->async && result.empty()) {
      error(loc, "an async MMA returns a future; name it, as `f = "
                 "mma.row.row.async acc, a, b;`");
      return nullptr;
    }
    for (int i = 0; i < 3; ++i) {
      if (i && !expect(","))
        return nullptr;
      ExprPtr operand = postfix();
      if (!operand)
        return nullptr;
      stmt->operands.push_back(std::move(operand));
    }
    // mma.row.row.sp acc, a, b, meta: the sparsity metadata.
    if (sparse) {
      if (!expect(",", "before the sparsity metadata of mma." + what + "." +
                           second + ".sp"))
        return nullptr;
      ExprPtr meta = postfix();
      if (!meta)
        return nullptr;
      stmt->operands.push_back(std::move(meta));
    }
    if (scaled && !mmaScales(*stmt))
      return nullptr;
    if (!expect(";"))
      return nullptr;
    return stmt;
  }
  if (what == "scale") {
    // mma.scale acc, sa, sb;
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::MmaScale, loc);
    if (!result.empty()) {
      error(resultLoc, "mma.scale scales its accumulator in place and has "
                       "no result; write `mma.scale " + result + ", sa, sb;`");
      return nullptr;
    }
    ExprPtr acc = postfix();
    if (!acc || !mmaScales(*stmt) || !expect(";"))
      return nullptr;
    stmt->operands.push_back(std::move(acc));
    return stmt;
  }
  error(whatLoc, "unknown mma operation 'mma." + what + "'");
  return nullptr;
}

bool Parser::mmaScales(Stmt &stmt) {
  if (!expect(",", "before the row scales of a block-scaled MMA") ||
      !(stmt.scaleA = postfix()) ||
      !expect(",", "before the tile scale of a block-scaled MMA") ||
      !(stmt.scaleB = expr()))
    return false;
  return true;
}

StmtPtr Parser::assignment(SMLoc loc) {
  // name = dma... / mma... / select(...) / expr
  if (peek().isIdent() && peek(1).is("=")) {
    std::string name = peek().text;
    SMLoc nameLoc = peek().loc;
    const Token &rhs = peek(2);
    if ((rhs.is("dma") || rhs.is("tma")) && peek(3).is(".")) {
      pos += 2;
      return dma(loc, name, nameLoc);
    }
    if (rhs.is("mma") && peek(3).is(".")) {
      pos += 2;
      return mma(loc, name, nameLoc);
    }
  }
  ExprPtr target = expr();
  if (!target)
    return nullptr;
  std::string op = peek().text;
  if (peek().kind == TokKind::Punct &&
      (op == "=" || op == "+=" || op == "-=" || op == "*=" || op == "/=" ||
       op == "%=")) {
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Assign, loc);
    stmt->op = op;
    stmt->target = std::move(target);
    if (!(stmt->value = expr()) || !expect(";"))
      return nullptr;
    return stmt;
  }
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::ExprStmt, loc);
  stmt->value = std::move(target);
  if (!expect(";", "after the statement"))
    return nullptr;
  return stmt;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool Parser::exprList(std::vector<ExprPtr> &out, StringRef close) {
  if (accept(close))
    return true;
  do {
    SMLoc loc = peek().loc;
    if (at("_") && (peek(1).is(",") || peek(1).is(close))) {
      next();
      auto wildcard = std::make_unique<Expr>(Expr::Kind::Name, loc);
      wildcard->name = "_";
      out.push_back(std::move(wildcard));
      continue;
    }
    ExprPtr e = expr();
    if (!e)
      return false;
    out.push_back(std::move(e));
  } while (accept(","));
  return expect(close);
}

ExprPtr Parser::expr() {
  DepthGuard guard(*this);
  if (tooDeep(peek().loc))
    return nullptr;
  return ternary();
}

ExprPtr Parser::ternary() {
  ExprPtr cond = binary(0);
  if (!cond || !at("?"))
    return cond;
  SMLoc loc = next().loc;
  auto e = std::make_unique<Expr>(Expr::Kind::Ternary, loc);
  e->args.push_back(std::move(cond));
  ExprPtr a = expr();
  if (!a || !expect(":"))
    return nullptr;
  ExprPtr b = expr();
  if (!b)
    return nullptr;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  if (!measure(*e))
    return nullptr;
  return e;
}

/// Binary levels from loosest to tightest, above the unary operators.
static const std::vector<std::vector<StringRef>> &binaryLevels() {
  static const std::vector<std::vector<StringRef>> levels = {
      {"||"},          {"&&"},          {"==", "!="},
      {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"},
      {"*", "/", "%"}, {"#+", "#-"},    {"#*", "#/", "#%"}};
  return levels;
}

ExprPtr Parser::leftAssoc(llvm::function_ref<ExprPtr()> operand,
                          llvm::ArrayRef<StringRef> ops) {
  ExprPtr lhs = operand();
  while (lhs && peek().kind == TokKind::Punct &&
         llvm::is_contained(ops, StringRef(peek().text))) {
    auto e = std::make_unique<Expr>(Expr::Kind::Binary, peek().loc);
    e->name = next().text;
    ExprPtr rhs = operand();
    if (!rhs)
      return nullptr;
    e->args.push_back(std::move(lhs));
    e->args.push_back(std::move(rhs));
    if (!measure(*e))
      return nullptr;
    lhs = std::move(e);
  }
  return lhs;
}

ExprPtr Parser::binary(int level) {
  if (level >= static_cast<int>(binaryLevels().size()))
    return unary();
  return leftAssoc([&] { return binary(level + 1); }, binaryLevels()[level]);
}

ExprPtr Parser::unary() {
  DepthGuard guard(*this);
  if (tooDeep(peek().loc))
    return nullptr;
  SMLoc loc = peek().loc;
  // `&x.at(i)`: the address of an element, a device-call argument.
  if (at("!") || at("-") || at("++") || at("--") || at("+") || at("&")) {
    std::string op = next().text;
    ExprPtr operand = unary();
    if (!operand)
      return nullptr;
    if (op == "+")
      return operand;
    auto e = std::make_unique<Expr>(Expr::Kind::Unary, loc);
    e->name = op;
    e->args.push_back(std::move(operand));
    if (!measure(*e))
      return nullptr;
    return e;
  }
  if (at("#")) {
    next();
    auto e = std::make_unique<Expr>(Expr::Kind::Bound, loc);
    ExprPtr operand = unary();
    if (!operand)
      return nullptr;
    e->args.push_back(std::move(operand));
    if (!measure(*e))
      return nullptr;
    return e;
  }
  return bitwise();
}

// `&`, `^` and `|` bind tighter than the unary operators; `|x.span|` is
// told apart in primary().
ExprPtr Parser::bitwise() {
  return leftAssoc([&] { return compose(); }, {"&", "^", "|"});
}

/// Binary `#` binds tighter than `*`.
ExprPtr Parser::compose() {
  return leftAssoc([&] { return tilde(); }, {"#"});
}

ExprPtr Parser::tilde() {
  if (!at("~"))
    return postfix();
  SMLoc loc = next().loc;
  DepthGuard guard(*this);
  if (tooDeep(loc))
    return nullptr;
  ExprPtr operand = tilde();
  if (!operand)
    return nullptr;
  auto e = std::make_unique<Expr>(Expr::Kind::Unary, loc);
  e->name = "~";
  e->args.push_back(std::move(operand));
  if (!measure(*e))
    return nullptr;
  return e;
}

ExprPtr Parser::postfix() {
  ExprPtr e = primary();
  while (e) {
    if (at(".") && peek(1).isIdent()) {
      SMLoc loc = peek(1).loc;
      next();
      auto member = std::make_unique<Expr>(Expr::Kind::Member, loc);
      member->name = next().text;
      member->base = std::move(e);
      if (member->name == "view" && accept("(")) {
        // `.view(sizes : strides)`: intValue counts the sizes.
        member->hasArgs = true;
        bool strided = false;
        for (;;) {
          ExprPtr arg = binary(0);
          if (!arg)
            return nullptr;
          member->args.push_back(std::move(arg));
          if (!strided && accept(":")) {
            strided = true;
            member->intValue = member->args.size();
            continue;
          }
          if (!accept(","))
            break;
        }
        if (!expect(")", "after the view's extents"))
          return nullptr;
      } else if (accept("(")) {
        member->hasArgs = true;
        if (!exprList(member->args, ")"))
          return nullptr;
      }
      if (!measure(*member))
        return nullptr;
      e = std::move(member);
      continue;
    }
    // `x[i]`, and `t {(2), (0)}`: elements of an index tuple, picked and
    // reordered (the same as `t[(2), (0)]`).
    StringRef close = at("[") ? "]"
                      : at("{") && peek(1).is("(") && e->kind == Expr::Kind::Name
                          ? "}"
                          : "";
    if (!close.empty()) {
      auto index = std::make_unique<Expr>(Expr::Kind::Index, next().loc);
      index->base = std::move(e);
      if (!exprList(index->args, close))
        return nullptr;
      if (!measure(*index))
        return nullptr;
      e = std::move(index);
      continue;
    }
    // `t(1)(-2)`: the value of a tuple's element counted from its bound.
    if (at("(") && e->kind == Expr::Kind::Call && e->base == nullptr) {
      auto call = std::make_unique<Expr>(Expr::Kind::Call, next().loc);
      call->base = std::move(e);
      if (!exprList(call->args, ")"))
        return nullptr;
      if (!measure(*call))
        return nullptr;
      e = std::move(call);
      continue;
    }
    if (at("++") || at("--")) {
      auto post = std::make_unique<Expr>(Expr::Kind::Postfix, peek().loc);
      post->name = next().text;
      post->args.push_back(std::move(e));
      if (!measure(*post))
        return nullptr;
      e = std::move(post);
      continue;
    }
    break;
  }
  return e;
}

/// Appends `t` to C++ text, a space between two words (`unsigned int`).
static void appendCppToken(std::string &text, const Token &t,
                           bool &previousWord) {
  bool word = t.kind == TokKind::Ident || t.kind == TokKind::Int ||
              t.kind == TokKind::Float;
  if (word && previousWord)
    text += ' ';
  text += t.text;
  previousWord = word;
}

void Parser::templateArguments(Expr &call, size_t begin, size_t end) {
  // The arguments between the angle brackets, split at top-level commas;
  // each kept as text, and as a Croqtile expression where it parses as one
  // (IRGen evaluates those that name Croqtile values: `f<buf.span(0)>`).
  size_t after = pos;
  int angles = 0, parens = 0;
  size_t start = begin;
  for (size_t i = begin; i <= end && i < toks.size(); ++i) {
    const Token &t = toks[i];
    bool last = i == end;
    if (!last) {
      if (t.is("("))
        ++parens;
      else if (t.is(")"))
        --parens;
      else if (parens == 0 && t.kind == TokKind::Punct && !t.is(","))
        for (char c : t.text)
          angles += c == '<' ? 1 : c == '>' ? -1 : 0;
    }
    if (!last && !(t.is(",") && angles == 0 && parens == 0))
      continue;
    std::string text;
    bool previousWord = false;
    for (size_t j = start; j < i; ++j)
      appendCppToken(text, toks[j], previousWord);
    pos = start;
    ++quiet;
    limit = i;
    ExprPtr e = start < i ? expr() : nullptr;
    limit = SIZE_MAX;
    --quiet;
    call.templateText.push_back(text);
    call.templateExprs.push_back(e && pos == i ? std::move(e) : nullptr);
    start = i + 1;
  }
  pos = after;
}

ExprPtr Parser::deviceCall(SMLoc loc) {
  auto call = std::make_unique<Expr>(Expr::Kind::DeviceCall, loc);
  // The callee: `a::b` segments, then template arguments kept as C++ text.
  if (accept("::"))
    call->name = "::";
  while (true) {
    std::string part;
    if (!expectIdent(part, nullptr, "the name of a device function"))
      return nullptr;
    call->name += part;
    if (!accept("::"))
      break;
    call->name += "::";
  }
  if (at("<")) {
    call->calleeBase = call->name;
    // Angle brackets count outside parentheses only: `f<(8 >> 1)>`.
    int depth = 0, parens = 0;
    bool previousWord = false;
    size_t open = pos;
    do {
      const Token &t = next();
      if (t.kind == TokKind::Eof || t.is(";") || t.is("{") || t.is("}")) {
        error(t.loc, "the template arguments of this call are not closed "
                     "with '>'");
        return nullptr;
      }
      if (t.is("("))
        ++parens;
      else if (t.is(")"))
        --parens;
      else if (parens == 0 && t.kind == TokKind::Punct)
        for (char c : t.text)
          depth += c == '<' ? 1 : c == '>' ? -1 : 0;
      appendCppToken(call->name, t, previousWord);
    } while (depth > 0);
    // A list closed by `>>` (a nested template last) stays text only.
    if (toks[pos - 1].is(">"))
      templateArguments(*call, open + 1, pos - 1);
  }
  if (!expect("(", "after the device function's name") ||
      !exprList(call->args, ")") || !measure(*call))
    return nullptr;
  return call;
}

ExprPtr Parser::primary() {
  const Token &tok = peek();
  SMLoc loc = tok.loc;
  switch (tok.kind) {
  case TokKind::Int: {
    auto e = std::make_unique<Expr>(Expr::Kind::Int, loc);
    StringRef text(tok.text);
    StringRef digits = text.rtrim("uUlL");
    // An unsigned literal (a `u` suffix) may use all 64 bits.
    bool isUnsigned = digits.size() != text.size() &&
                      text.drop_front(digits.size()).find_first_of("uU") !=
                          StringRef::npos;
    uint64_t value;
    if (digits.getAsInteger(0, value) ||
        (!isUnsigned && value > uint64_t(INT64_MAX))) {
      error(loc, "integer literal '" + tok.text + "' does not fit in 64 bits");
      return nullptr;
    }
    e->intValue = static_cast<int64_t>(value);
    next();
    return e;
  }
  case TokKind::Float: {
    auto e = std::make_unique<Expr>(Expr::Kind::Float, loc);
    StringRef text(tok.text);
    e->isF32 = text.ends_with("f") || text.ends_with("F");
    if (text.rtrim("fFlL").getAsDouble(e->floatValue)) {
      error(loc, "malformed floating-point literal '" + tok.text + "'");
      return nullptr;
    }
    next();
    return e;
  }
  case TokKind::Ident: {
    if (tok.is("true") || tok.is("false")) {
      auto e = std::make_unique<Expr>(Expr::Kind::Bool, loc);
      e->intValue = tok.is("true");
      next();
      return e;
    }
    if (rejectEscapeHatch())
      return nullptr;
    if (tok.is("call") && (peek(1).isIdent() || peek(1).is("::"))) {
      next();
      return deviceCall(loc);
    }
    std::string name = next().text;
    if (accept("(")) {
      auto call = std::make_unique<Expr>(Expr::Kind::Call, loc);
      call->name = name;
      if (!exprList(call->args, ")") || !measure(*call))
        return nullptr;
      return call;
    }
    if (name == "__to" && at("<")) {
      next();
      auto call = std::make_unique<Expr>(Expr::Kind::Call, loc);
      call->name = name;
      std::string type;
      if (!expectIdent(type, nullptr, "a type") || !expect(">") ||
          !expect("(") || !exprList(call->args, ")"))
        return nullptr;
      call->typeArgs.push_back(type);
      return call;
    }
    auto e = std::make_unique<Expr>(Expr::Kind::Name, loc);
    e->name = name;
    return e;
  }
  case TokKind::Punct:
    if (tok.is("(")) {
      next();
      ExprPtr inner = expr();
      if (!inner || !expect(")"))
        return nullptr;
      inner->parenthesized = true;
      return inner;
    }
    if (tok.is("[") || tok.is("{")) {
      // `[a, b]` (an mdspan) or `{a, b}` (an ituple).
      bool list = next().is("[");
      auto e = std::make_unique<Expr>(list ? Expr::Kind::List : Expr::Kind::Tuple, loc);
      if (!exprList(e->args, list ? "]" : "}") || !measure(*e))
        return nullptr;
      if (e->args.empty()) {
        error(loc, list ? "an mdspan needs at least one extent"
                        : "an ituple needs at least one element");
        return nullptr;
      }
      return e;
    }
    if (tok.is("|")) {
      next();
      auto e = std::make_unique<Expr>(Expr::Kind::Count, loc);
      ExprPtr inner = postfix();
      if (!inner || !expect("|", "closing |x.span|"))
        return nullptr;
      e->args.push_back(std::move(inner));
      if (!measure(*e))
        return nullptr;
      return e;
    }
    break;
  case TokKind::String: {
    auto e = std::make_unique<Expr>(Expr::Kind::String, loc);
    if (!unquote(tok.text, e->name)) {
      error(loc, "unsupported escape in string literal " + tok.text);
      return nullptr;
    }
    next();
    // Adjacent literals concatenate, as in C.
    while (peek().kind == TokKind::String) {
      std::string more;
      if (!unquote(peek().text, more)) {
        error(peek().loc, "unsupported escape in string literal " + peek().text);
        return nullptr;
      }
      e->name += more;
      next();
    }
    return e;
  }
  default:
    break;
  }
  std::string found = tok.kind == TokKind::Eof ? "end of input"
                                                : "'" + tok.text + "'";
  error(loc, "expected an expression, found " + found);
  return nullptr;
}

bool mlir::croq::croqtile::parseProgram(llvm::SourceMgr &sourceMgr,
                                        const std::vector<Token> &tokens,
                                        Program &program,
                                        const ErrorFn &error) {
  return Parser(sourceMgr, tokens, error).program(program);
}
