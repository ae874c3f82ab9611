# BuildtoolConfig.cmake: buildtool's model pipeline as CMake targets (docs/cmake.md).
#
#   cmake -DCMAKE_PREFIX_PATH=$(buildtool cmake-dir) ...     (or -DBuildtool_DIR=$(buildtool cmake-dir))
#   find_package(Buildtool REQUIRED)
#   buildtool_add_model(<target> MODEL <file.tflite> | ZOO <name>  [BOARD <board>]
#                       [PLAN_OPTIONS key=value ...] [RAM_LIMIT <bytes>] [NO_DAEMON] [LIBRARY])
#       LIBRARY: the model alone for your own start-up code and linker script (any compiler for the board's CPU)
#   add_executable(app main.c)  target_link_libraries(app PRIVATE <target>)   # your own bt_main()
#   buildtool_add_firmware(<exe> MODEL <target>)                               # or the built-in harness
#   buildtool_firmware_report(<exe> MODEL <target>)   # after the link: load segments + RAM/flash line
#       (automatic for executables linking <target> in its own CMakeLists.txt; BUILDTOOL_FIRMWARE_REPORT=OFF: none)
#
# A cross board needs its toolchain file: -DCMAKE_TOOLCHAIN_FILE=$(buildtool cmake-dir)/toolchains/<board>.cmake
# (it also makes <board> the default BOARD). Every step is `python -m buildtool.cli gen STEP` with its
# inputs in DEPENDS and a DEPFILE naming the Python that ran; outputs are rewritten only when their bytes
# change, and the step's stamp says it ran (_buildtool_step), so Ninja and Make stop early: a weight-only edit
# reruns skeleton, flash, the weights object and the link, never the plan or model.c; an unchanged build runs
# nothing.

if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "buildtool: CMake >= 3.20 is needed (DEPFILE with Ninja and Makefiles); this is ${CMAKE_VERSION}")
endif()
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)  # recorded by the functions below: CMP0116 (depfiles) NEW

get_filename_component(BUILDTOOL_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" REALPATH)
get_filename_component(BUILDTOOL_PACKAGE_DIR "${BUILDTOOL_CMAKE_DIR}" DIRECTORY)
get_filename_component(_bt_import_root "${BUILDTOOL_PACKAGE_DIR}" DIRECTORY)
set(BUILDTOOL_TOOLCHAINS_DIR "${BUILDTOOL_CMAKE_DIR}/toolchains")

# The Python that imports this very package: BUILDTOOL_PYTHON if given, else a venv's python next to
# the package, else the Python3 CMake finds; PYTHONPATH is pinned when the package is not installed there.
function(_buildtool_probe py out)
  set(code "import os, numpy, buildtool; print(os.path.dirname(os.path.realpath(buildtool.__file__)))")
  foreach(env "--unset=PYTHONPATH" "PYTHONPATH=${_bt_import_root}")
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env "${env}" "${py}" -c "${code}"
                    WORKING_DIRECTORY "${BUILDTOOL_CMAKE_DIR}"  # not the caller's folder: -c puts it first on sys.path
                    RESULT_VARIABLE rc OUTPUT_VARIABLE dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND dir STREQUAL BUILDTOOL_PACKAGE_DIR)
      if(env MATCHES "^--unset")
        set(${out} "${py}" PARENT_SCOPE)
      else()
        set(${out} "${CMAKE_COMMAND};-E;env;${env};${py}" PARENT_SCOPE)
      endif()
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

function(_buildtool_find_python)
  if(_BUILDTOOL_PYTHON_FOR STREQUAL BUILDTOOL_PACKAGE_DIR AND _BUILDTOOL_PYTHON_COMMAND)
    return()  # found at an earlier configure
  endif()
  set(candidates "")
  if(BUILDTOOL_PYTHON)
    list(APPEND candidates "${BUILDTOOL_PYTHON}")
  else()
    get_filename_component(venv "${_bt_import_root}/../../.." ABSOLUTE)  # venv/lib/pythonX.Y/site-packages
    if(EXISTS "${venv}/pyvenv.cfg" AND EXISTS "${venv}/bin/python3")
      list(APPEND candidates "${venv}/bin/python3")
    endif()
    find_package(Python3 QUIET COMPONENTS Interpreter)
    if(Python3_EXECUTABLE)
      list(APPEND candidates "${Python3_EXECUTABLE}")
    endif()
  endif()
  foreach(py IN LISTS candidates)
    _buildtool_probe("${py}" cmd)
    if(cmd)
      set(_BUILDTOOL_PYTHON_COMMAND "${cmd}" CACHE INTERNAL "how to run buildtool's Python")
      set(_BUILDTOOL_PYTHON_FOR "${BUILDTOOL_PACKAGE_DIR}" CACHE INTERNAL "the package it imports")
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "buildtool: no Python (tried: ${candidates}) imports buildtool and numpy from "
                      "${BUILDTOOL_PACKAGE_DIR}; set -DBUILDTOOL_PYTHON=/path/to/python3")
endfunction()

_buildtool_find_python()
set(BUILDTOOL_PYTHON_COMMAND "${_BUILDTOOL_PYTHON_COMMAND}")
set(BUILDTOOL_COMMAND ${BUILDTOOL_PYTHON_COMMAND} -m buildtool.cli)

if("${CMAKE_EXPORT_COMPILE_COMMANDS}" STREQUAL "")  # unless the user said OFF: for clangd and IDEs
  set(CMAKE_EXPORT_COMPILE_COMMANDS ON)  # (the generators define the cache entry empty)
endif()
get_property(_bt_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "ASM" IN_LIST _bt_languages)  # the weights object is assembler (.incbin of weights.bin)
  enable_language(ASM)
endif()

# A user's mistake: one unwrapped line (indented text is pre-formatted in CMake's messages).
function(_buildtool_fail name text)
  string(STRIP "${text}" text)
  string(REGEX REPLACE "^buildtool: error: " "" text "${text}")
  string(REPLACE "\n" " " text "${text}")
  message(FATAL_ERROR " buildtool: ${name}: ${text}")
endfunction()

# Configure time: check the board, model and options (one line when wrong), read the board's flags,
# sources and linker script (buildtool gen board) into BT_* variables in the caller's scope.
# Reads buildtool_add_model's arg_* and model.
function(_buildtool_configure name out)
  set(args --board "${arg_BOARD}" -o "${out}")
  if(arg_ZOO)
    list(APPEND args --zoo "${arg_ZOO}")
  else()
    list(APPEND args --model "${model}")
  endif()
  foreach(o IN LISTS arg_PLAN_OPTIONS)
    list(APPEND args --opt "${o}")
  endforeach()
  if(DEFINED arg_RAM_LIMIT)
    list(APPEND args --ram-limit "${arg_RAM_LIMIT}")
  endif()
  if(arg_LIBRARY)
    list(APPEND args --library)
  endif()
  execute_process(COMMAND ${BUILDTOOL_PYTHON_COMMAND} -m buildtool.cmake configure ${args}
                  WORKING_DIRECTORY "${BUILDTOOL_CMAKE_DIR}" RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    _buildtool_fail(${name} "${err}")
  endif()
  include("${out}/buildtool.cmake")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${BT_CONFIGURE_DEPENDS})
  foreach(v BT_CC BT_NATIVE BT_CFLAGS BT_CPU_FLAGS BT_INCLUDES BT_KERNEL_SOURCES BT_KERNEL_UNITS BT_STARTUP_SOURCES BT_HARNESS_MAIN
            BT_LDFLAGS BT_LDLIBS BT_LINKER_SCRIPT BT_FUSED BT_RUN BT_MEASURES_CODE)
    set(${v} "${${v}}" PARENT_SCOPE)
  endforeach()
endfunction()

# One build tree compiles for one board: the tree's compiler must be the board's.
function(_buildtool_check_compiler name board)
  get_filename_component(cc "${CMAKE_C_COMPILER}" NAME)
  if(BT_NATIVE AND CMAKE_CROSSCOMPILING)
    _buildtool_fail(${name} "board ${board} builds natively; this build tree cross-compiles with ${cc} (configure another build tree without the toolchain file)")
  elseif(NOT BT_NATIVE AND NOT cc STREQUAL BT_CC)
    _buildtool_fail(${name} "board ${board} compiles with ${BT_CC}, this build tree with ${cc}: configure it with -DCMAKE_TOOLCHAIN_FILE=${BUILDTOOL_TOOLCHAINS_DIR}/${board}.cmake")
  endif()
endfunction()

# One step of <name> (buildtool_add_model's arg_*, out): COMMAND ... writes BYPRODUCTS (each rewritten only when its
# bytes change, so it may stay older than its inputs), then touches the step's stamp OUT/STEP.stamp, the command's
# one OUTPUT (and its depfile's target: gen --depfile-target). An unchanged output thus never makes the step rerun
# (Make has no restat: an output older than its inputs reran it on every build), and what reads an output depends on
# the file itself, so it reruns only when its bytes changed: Ninja restats the byproducts; under Make each step is
# a target of its own (<name>_bt_STEP, AFTER the steps whose outputs it reads: Make compares the files' times once
# those ran, a byproduct having no rule of its own), all of them under <name>_sources.
function(_buildtool_step name step)
  cmake_parse_arguments(PARSE_ARGV 2 s "" "DEPFILE;COMMENT;WORKING_DIRECTORY" "BYPRODUCTS;COMMAND;CHECK;DEPENDS;AFTER")
  set(stamp "${out}/${step}.stamp")
  set(extra "")
  if(s_DEPFILE)
    list(APPEND extra DEPFILE "${s_DEPFILE}")
  endif()
  if(s_WORKING_DIRECTORY)
    list(APPEND extra WORKING_DIRECTORY "${s_WORKING_DIRECTORY}")
  endif()
  if(s_CHECK)  # a check of the outputs: before the stamp, so a failed one fails every build until fixed
    list(PREPEND s_CHECK COMMAND)
  endif()
  add_custom_command(OUTPUT "${stamp}" BYPRODUCTS ${s_BYPRODUCTS}
    COMMAND ${s_COMMAND} ${s_CHECK} COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS ${s_DEPENDS} ${extra} VERBATIM COMMENT "${s_COMMENT}")
  add_custom_target(${name}_bt_${step} DEPENDS "${stamp}")
  foreach(a IN LISTS s_AFTER)
    add_dependencies(${name}_bt_${step} ${name}_bt_${a})
  endforeach()
  add_dependencies(${name}_sources ${name}_bt_${step})
endfunction()

# The pipeline's steps, each `buildtool gen STEP` with its inputs, outputs and depfile declared.
# Reads buildtool_add_model's arg_*, model_name and BT_*.
function(_buildtool_steps name out model)
  add_custom_target(${name}_sources)  # every step (each a target of its own: _buildtool_step)
  set(gen ${BUILDTOOL_COMMAND} gen)
  # Make: each step's depfile also names its outputs as its stamp's prerequisites (CMake gives a depfile's
  # prerequisites empty rules, so a deleted output is new and reruns its step); Ninja remakes a missing byproduct
  # itself and would read its own output among its inputs as a cycle
  set(dep_outs "")
  if(CMAKE_GENERATOR MATCHES "Makefiles")
    set(dep_outs --depfile-outputs)
  endif()
  if(arg_NO_DAEMON)  # every step in its own process (default: in the warm planner daemon, started on demand)
    list(APPEND gen --no-daemon)
  endif()
  # the command line that runs a step (its code's own sources come through the depfiles)
  set(tool "${BUILDTOOL_PACKAGE_DIR}/cli/gen.py" "${BUILDTOOL_PACKAGE_DIR}/cli/gen_steps.py"
           "${BUILDTOOL_PACKAGE_DIR}/cli/__init__.py")
  set(model_step "")
  if(arg_ZOO)
    _buildtool_step(${name} model BYPRODUCTS "${model}"
      COMMAND ${gen} model "${arg_ZOO}" -o "${model}" --depfile "${out}/model.d" --depfile-target "${out}/model.stamp" ${dep_outs}
      DEPENDS ${tool} DEPFILE "${out}/model.d" COMMENT "buildtool model ${name}")
    set(model_step model)
  endif()
  _buildtool_step(${name} skeleton BYPRODUCTS "${out}/skeleton.json"
    COMMAND ${gen} skeleton "${model}" -o "${out}/skeleton.json" --depfile "${out}/skeleton.d"
            --depfile-target "${out}/skeleton.stamp" ${dep_outs}
    DEPENDS "${model}" ${tool} DEPFILE "${out}/skeleton.d" AFTER ${model_step} COMMENT "buildtool skeleton ${name}")
  set(opts "")
  set(code_opts "")  # the code step's options (optimize_code, code_budget, staging_ram): a change reruns the code step only
  foreach(o IN LISTS arg_PLAN_OPTIONS)
    if(o MATCHES "^[ ]*(optimize_code|code_budget|staging_ram)[ ]*=")
      list(APPEND code_opts --opt "${o}")
    else()
      list(APPEND opts --opt "${o}")
    endif()
  endforeach()
  _buildtool_step(${name} plan BYPRODUCTS "${out}/plan.json"
    COMMAND ${gen} plan "${out}/skeleton.json" -o "${out}/plan.json" ${opts} --board ${arg_BOARD} --name "${model_name}"
            --depfile "${out}/plan.d" --depfile-target "${out}/plan.stamp" ${dep_outs}
    DEPENDS "${out}/skeleton.json" ${tool} DEPFILE "${out}/plan.d" AFTER skeleton COMMENT "buildtool plan ${name}")
  # a fused plan's code holds weight copies: made from the model; a layer-by-layer plan's from the skeleton
  set(code_in "${out}/skeleton.json")
  set(code_after skeleton plan)
  if(BT_FUSED)
    set(code_in "${model}")
    list(APPEND code_after ${model_step})
  endif()
  set(check "")
  if(DEFINED arg_RAM_LIMIT)
    set(check CHECK ${BUILDTOOL_PYTHON_COMMAND} -m buildtool.cmake ram-check "${out}/firmware.json" ${arg_RAM_LIMIT})
  endif()
  _buildtool_step(${name} code BYPRODUCTS "${out}/model.c" "${out}/model.h" "${out}/firmware.json"
    COMMAND ${gen} code "${code_in}" "${out}/plan.json" --board ${arg_BOARD} --name "${model_name}"
            -o "${out}" --depfile "${out}/code.d" --depfile-target "${out}/code.stamp" ${dep_outs} ${code_opts}
    ${check}
    DEPENDS "${code_in}" "${out}/plan.json" ${tool} DEPFILE "${out}/code.d" AFTER ${code_after}
    COMMENT "buildtool code ${name}")
  # a fused plan re-reads weights per tile: the flash step places them (memory regions) by its counts,
  # around the code's flash bytes the code step measured (boards whose weights may go external)
  set(flash_plan "")
  set(flash_after ${model_step})
  if(BT_FUSED)
    set(flash_plan "${out}/plan.json")
    list(APPEND flash_after plan)
  endif()
  set(flash_code "")
  set(flash_code_in "")
  if(BT_MEASURES_CODE)
    set(flash_code --code-size "${out}/firmware.json")
    set(flash_code_in "${out}/firmware.json")
    list(APPEND flash_after code)
  endif()
  _buildtool_step(${name} flash BYPRODUCTS "${out}/weights.bin" "${out}/weights_split.h"
    COMMAND ${gen} flash "${model}" ${flash_plan} --board ${arg_BOARD} -o "${out}/weights.bin"
            --depfile "${out}/flash.d" --depfile-target "${out}/flash.stamp" ${dep_outs} --split-header "${out}/weights_split.h"
            ${flash_code}
    DEPENDS "${model}" ${flash_plan} ${flash_code_in} ${tool} DEPFILE "${out}/flash.d" AFTER ${flash_after}
    COMMENT "buildtool flash ${name}")
  # a kernel split into files by path: its unit includes those model.c calls (rewritten only when they change)
  if(BT_KERNEL_UNITS)
    _buildtool_step(${name} units BYPRODUCTS ${BT_KERNEL_UNITS}
      COMMAND ${BUILDTOOL_PYTHON_COMMAND} -m buildtool.cmake units "${out}/units.json" "${out}/model.c" "${out}/model.h"
              --depfile "${out}/units.d" --depfile-target "${out}/units.stamp" ${dep_outs}
      DEPENDS "${out}/model.c" "${out}/model.h" "${out}/units.json" DEPFILE "${out}/units.d" AFTER code
      WORKING_DIRECTORY "${BUILDTOOL_CMAKE_DIR}"
      COMMENT "buildtool kernel units ${name}")
  endif()
endfunction()

# The libraries: <name> (model.c + kernels, STATIC) and <name>_rt (start-up code + weights object,
# OBJECT, linked into every executable that links <name>).
function(_buildtool_targets name out)
  set(blob "${out}/weights_blob.S")
  set_source_files_properties("${blob}" PROPERTIES OBJECT_DEPENDS  # .incbin: unseen by -MD
                              "${out}/weights.bin;${out}/weights_split.h")
  add_library(${name}_rt OBJECT ${BT_STARTUP_SOURCES} "${blob}")
  add_library(${name} STATIC "${out}/model.c" ${BT_KERNEL_SOURCES})
  foreach(t ${name} ${name}_rt)
    add_dependencies(${t} ${name}_sources)
  endforeach()
  target_compile_options(${name}_rt PRIVATE ${BT_CFLAGS})
  target_include_directories(${name}_rt PRIVATE "${out}" ${BT_INCLUDES})
  target_compile_options(${name} PUBLIC ${BT_CFLAGS})
  target_include_directories(${name} PUBLIC "${out}" ${BT_INCLUDES})
  target_link_options(${name} INTERFACE ${BT_LDFLAGS})
  target_link_libraries(${name} INTERFACE $<TARGET_OBJECTS:${name}_rt> ${BT_LDLIBS})
  if(BT_LINKER_SCRIPT)
    set_property(TARGET ${name} APPEND PROPERTY INTERFACE_LINK_DEPENDS "${BT_LINKER_SCRIPT}")
  endif()
  set_target_properties(${name} PROPERTIES BUILDTOOL_BOARD "${arg_BOARD}" BUILDTOOL_OUT "${out}"
                        BUILDTOOL_HARNESS_MAIN "${BT_HARNESS_MAIN}" BUILDTOOL_NATIVE "${BT_NATIVE}"
                        BUILDTOOL_RUN "${BT_RUN}")
endfunction()

function(buildtool_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_DAEMON;LIBRARY" "MODEL;ZOO;BOARD;RAM_LIMIT" "PLAN_OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    _buildtool_fail(${name} "unknown argument(s) ${arg_UNPARSED_ARGUMENTS} (MODEL, ZOO, BOARD, PLAN_OPTIONS, RAM_LIMIT, NO_DAEMON, LIBRARY)")
  endif()
  if(NOT arg_BOARD)
    if(NOT BUILDTOOL_BOARD)
      _buildtool_fail(${name} "give BOARD <board> (`buildtool boards` lists them) or a buildtool toolchain file")
    endif()
    set(arg_BOARD "${BUILDTOOL_BOARD}")
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  if(arg_ZOO)
    set(model "${out}/model.tflite")
    set(model_name "${arg_ZOO}")
  else()
    get_filename_component(model "${arg_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(model_name "${model}" NAME_WLE)
  endif()
  _buildtool_configure(${name} "${out}")
  if(arg_LIBRARY)  # the project's own compiler, start-up code and linker script
    _buildtool_steps(${name} "${out}" "${model}")
    _buildtool_library(${name} "${out}")
    return()
  endif()
  _buildtool_check_compiler(${name} "${arg_BOARD}")
  _buildtool_steps(${name} "${out}" "${model}")
  _buildtool_targets(${name} "${out}")
  # at the end of this CMakeLists.txt: the RAM/flash report after the link of every executable here
  # that links the model (add_custom_command(TARGET) takes only targets of the same directory)
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _buildtool_auto_report [[${name}]])")
endfunction()

# LIBRARY: <name> alone (STATIC: model.c, the board's kernels, the weights in .rodata.bt_weights), compiled
# with the board's flags by the project's compiler (its CPU flags INTERFACE: the project's sources and link
# get them); no start-up code, linker script, link options or
# harness, and no report after the link (the image's memories are the project's).
function(_buildtool_library name out)
  set(blob "${out}/weights_blob.S")
  set_source_files_properties("${blob}" PROPERTIES OBJECT_DEPENDS "${out}/weights.bin;${out}/weights_split.h")
  add_library(${name} STATIC "${out}/model.c" ${BT_KERNEL_SOURCES} "${blob}")
  add_dependencies(${name} ${name}_sources)
  target_compile_options(${name} PRIVATE ${BT_CFLAGS})
  # the CPU and float ABI reach every target linking the model: its own sources and its link (libgcc)
  target_compile_options(${name} INTERFACE ${BT_CPU_FLAGS})
  target_link_options(${name} INTERFACE ${BT_CPU_FLAGS})
  target_include_directories(${name} PUBLIC "${out}" ${BT_INCLUDES})
  set_target_properties(${name} PROPERTIES BUILDTOOL_BOARD "${arg_BOARD}" BUILDTOOL_OUT "${out}"
                        BUILDTOOL_LIBRARY ON BUILDTOOL_NATIVE "${BT_NATIVE}")
endfunction()

# Deferred by buildtool_add_model: buildtool_firmware_report for each executable of the model's
# directory that links <model> and has no report yet; none when BUILDTOOL_FIRMWARE_REPORT is OFF.
function(_buildtool_auto_report model)
  if(DEFINED BUILDTOOL_FIRMWARE_REPORT AND NOT BUILDTOOL_FIRMWARE_REPORT)
    return()
  endif()
  get_property(targets DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    get_target_property(reported ${t} BUILDTOOL_REPORTED)
    get_target_property(libs ${t} LINK_LIBRARIES)
    get_target_property(library ${model} BUILDTOOL_LIBRARY)
    if(type STREQUAL "EXECUTABLE" AND NOT reported AND NOT library AND libs AND "${model}" IN_LIST libs)
      buildtool_firmware_report(${t} MODEL ${model})
    endif()
  endforeach()
endfunction()

# <exe>'s MODEL argument into <var>: a buildtool_add_model target, else one line.
macro(_buildtool_model_arg exe var)
  cmake_parse_arguments(_bt "" "MODEL" "" ${ARGN})
  if(NOT _bt_MODEL OR NOT TARGET "${_bt_MODEL}")
    _buildtool_fail(${exe} "MODEL must name a buildtool_add_model target (got '${_bt_MODEL}')")
  endif()
  set(${var} "${_bt_MODEL}")
endmacro()

# After <exe>'s link: its load segments where the board has memory (else the ELF is removed) and one
# line of RAM and flash against the board's (one more Python start per link).
function(buildtool_firmware_report exe)
  _buildtool_model_arg(${exe} arg_MODEL ${ARGN})
  get_target_property(reported ${exe} BUILDTOOL_REPORTED)
  if(reported)
    return()
  endif()
  set_property(TARGET ${exe} PROPERTY BUILDTOOL_REPORTED ON)
  get_target_property(board ${arg_MODEL} BUILDTOOL_BOARD)
  get_target_property(out ${arg_MODEL} BUILDTOOL_OUT)
  add_custom_command(TARGET ${exe} POST_BUILD
    COMMAND ${BUILDTOOL_PYTHON_COMMAND} -m buildtool.cmake check "$<TARGET_FILE:${exe}>" --board ${board}
            --manifest "${out}/firmware.json"
    VERBATIM)
endfunction()

# The built-in harness (firmware_src/common/main.c: reads the input, runs, writes the output) linked
# with a model: <exe> (<exe>.elf on a cross board).
function(buildtool_add_firmware exe)
  _buildtool_model_arg(${exe} arg_MODEL ${ARGN})
  get_target_property(main ${arg_MODEL} BUILDTOOL_HARNESS_MAIN)
  if(NOT main)
    _buildtool_fail(${exe} "MODEL ${arg_MODEL} was not made by buildtool_add_model")
  endif()
  get_target_property(native ${arg_MODEL} BUILDTOOL_NATIVE)
  add_executable(${exe} "${main}")
  target_link_libraries(${exe} PRIVATE ${arg_MODEL})
  if(NOT native)
    set_target_properties(${exe} PROPERTIES SUFFIX ".elf")
  endif()
  buildtool_firmware_report(${exe} MODEL ${arg_MODEL})
endfunction()

cmake_policy(POP)
