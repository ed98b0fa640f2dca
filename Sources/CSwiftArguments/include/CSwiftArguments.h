// The command line's arguments for the Swift runtime of the `audiograph` executable, taken from glibc's constructor call.
#ifndef AG_SWIFT_ARGUMENTS_H
#define AG_SWIFT_ARGUMENTS_H

/// The arguments glibc passed to the executable's constructors (argc; argv is
/// `ag_swift_arguments_vector`), or 0 before the constructors ran. Tests compare them with
/// `CommandLine.arguments`.
int ag_swift_arguments_count(void);
char **ag_swift_arguments_vector(void);

#endif
