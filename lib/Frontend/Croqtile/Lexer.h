//===- Lexer.h - Croqtile lexer and preprocessor ----------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_LEXER_H
#define CROQ_LIB_FRONTEND_CROQTILE_LEXER_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::croq::croqtile {

enum class TokKind { Eof, Ident, Int, Float, String, Char, Punct };

struct Token {
  TokKind kind = TokKind::Eof;
  std::string text;
  llvm::SMLoc loc;
  /// First token on its line (directives start lines).
  bool atLineStart = false;
  /// Preceded by whitespace (for `group-4` and function-like macros).
  bool spaceBefore = false;

  bool is(llvm::StringRef punctOrIdent) const {
    return (kind == TokKind::Punct || kind == TokKind::Ident) &&
           text == punctOrIdent;
  }
  bool isIdent() const { return kind == TokKind::Ident; }
};

/// Reports a located error; returns false so callers can `return report(...)`.
using ErrorFn = std::function<bool(llvm::SMLoc, const llvm::Twine &)>;

/// Splits one buffer of the source manager into tokens. Comments are
/// skipped; errors (an unterminated comment or string, a stray byte) are
/// reported and lexing stops.
bool lexBuffer(llvm::SourceMgr &sourceMgr, unsigned bufferId,
               std::vector<Token> &tokens, const ErrorFn &error);

struct PreprocessorOptions {
  /// `NAME` or `NAME=VALUE`, as `-D`.
  std::vector<std::string> defines;
  /// Directories searched by `#include`, as `-I`.
  std::vector<std::string> includeDirs;
};

/// Runs the preprocessor over the main buffer: directives (`#define`,
/// `#undef`, `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif`,
/// `#include`, `#error`), object- and function-like macro expansion, and
/// command-line defines. Expanded tokens carry the location of the macro
/// use. Returns false after reporting an error.
bool preprocess(llvm::SourceMgr &sourceMgr, const PreprocessorOptions &options,
                std::vector<Token> &out, const ErrorFn &error,
                const ErrorFn &warning);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_LEXER_H
