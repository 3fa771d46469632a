//===- Parser.h - Croqtile parser -------------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_PARSER_H
#define CROQ_LIB_FRONTEND_CROQTILE_PARSER_H

#include "AST.h"
#include "Lexer.h"

namespace mlir::croq::croqtile {

/// Parses preprocessed tokens: `__co__` functions become Functions, the host
/// C++ around them is kept as text. Returns false after reporting an error.
bool parseProgram(llvm::SourceMgr &sourceMgr, const std::vector<Token> &tokens,
                  Program &program, const ErrorFn &error);

/// True for Croqtile element type names (f16, s32, ...).
bool isElementTypeName(llvm::StringRef name);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_PARSER_H
