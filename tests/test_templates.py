"""The jinja2 environment of the C templates (tilewise/templating.py): strictness, whitespace, the
shared macros and filters, and a kernel family's own template folder."""

from __future__ import annotations

import subprocess
import sys

import jinja2
import pytest

from tilewise.templating import TEMPLATES, c_comment, c_float, environment, render


def test_a_name_the_template_is_not_given_is_an_error():
    with pytest.raises(jinja2.UndefinedError):
        render("network.h.j2")


def test_block_tags_leave_no_lines_and_the_last_newline_is_kept():
    t = environment().from_string("a\n{% if x %}\n  b\n{% endif %}\nc\n")
    assert t.render(x=True) == "a\n  b\nc\n"
    assert t.render(x=False) == "a\nc\n"


def test_c_comment():
    assert c_comment("one\n\ntwo  \n") == "/*\n * one\n *\n * two\n */\n"
    t = environment().from_string("{% filter c_comment %}\nx = {{ x }}\n{% endfilter %}\nint y;\n")
    assert t.render(x=1) == "/*\n * x = 1\n */\nint y;\n"


def test_c_float_is_the_exact_float32_value():
    assert c_float(0.1) == "0x1.99999a0000000p-4f"          # float32(0.1), not the double
    assert c_float(-2.5) == "-0x1.4000000000000p+1f"
    assert c_float(0.0) == c_float(-0.0) == "0.0f"
    t = environment().from_string("{{ [0.5, 1]|map('c_float')|join(', ') }};\n")
    assert t.render() == "0x1.0000000000000p-1f, 0x1.0000000000000p+0f;\n"


def test_guarded_writes_the_if_at_the_statement_indentation():
    t = environment().from_string(
        '{% from "c.j2" import cond, guarded %}\n'
        "{\n"
        "    {% call guarded(cond(dims), 'why') %}\n"
        "    f();\n"
        "    {% endcall %}\n"
        "}\n")
    assert t.render(dims=["k", "oy"]) == "{\n    if (i_k == 0 && i_oy == 0)   /* why */\n        f();\n}\n"
    assert t.render(dims=[]) == "{\n    f();   /* why */\n}\n"


def test_a_family_folder_is_searched_first_and_sees_the_shared_macros(tmp_path):
    (tmp_path / "call.c.j2").write_text(
        '{% from "c.j2" import cond %}\n'
        "if ({{ cond(dims, 'n', true) }}) {{ kernel }}(&k, core, cores);\n")
    (tmp_path / "layers.h.j2").write_text("shadowed\n")
    text = render("call.c.j2", tmp_path, dims=["c"], kernel="tw_conv2d_s8")
    assert text == "if (n_c == N_C - 1) tw_conv2d_s8(&k, core, cores);\n"
    assert render("layers.h.j2", tmp_path) == "shadowed\n"
    assert environment(TEMPLATES) is environment()


def test_the_template_module_imports_nothing_a_binding_is_imported_by():
    """The template module is a base-layer helper (bindings and codegen render with it): it
    imports no other tilewise module."""
    code = ("import sys, tilewise.templating; "
            "print(sorted(m for m in sys.modules if m.startswith('tilewise.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['tilewise.templating']"
