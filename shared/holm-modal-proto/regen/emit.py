"""Renders the subset of modal_proto that holm uses, from the file
descriptors the pinned `modal` package ships (its wheel has modal_proto/*_pb2.py,
not the .proto files): every message reachable from the listed methods, with
all its fields, numbers and enums.

Run with the vendors' venv (which has the pinned modal):
  python regen/emit.py API_METHODS TCR_METHODS CUT proto/modal_proto
with the method lists and the cut message types (fields of those types are
left out: google.protobuf.Timestamp, which holm never reads) in the three
lines of regen/methods.txt."""
import sys
from google.protobuf import descriptor as d
from modal_proto import api_pb2, task_command_router_pb2 as tcr

API_METHODS = sys.argv[1].split(',')
TCR_METHODS = sys.argv[2].split(',')
CUT = set(sys.argv[3].split(',')) if len(sys.argv) > 3 else set()

TYPES = {d.FieldDescriptor.TYPE_DOUBLE:'double',d.FieldDescriptor.TYPE_FLOAT:'float',d.FieldDescriptor.TYPE_INT64:'int64',
 d.FieldDescriptor.TYPE_UINT64:'uint64',d.FieldDescriptor.TYPE_INT32:'int32',d.FieldDescriptor.TYPE_FIXED64:'fixed64',
 d.FieldDescriptor.TYPE_FIXED32:'fixed32',d.FieldDescriptor.TYPE_BOOL:'bool',d.FieldDescriptor.TYPE_STRING:'string',
 d.FieldDescriptor.TYPE_BYTES:'bytes',d.FieldDescriptor.TYPE_UINT32:'uint32',d.FieldDescriptor.TYPE_SFIXED32:'sfixed32',
 d.FieldDescriptor.TYPE_SFIXED64:'sfixed64',d.FieldDescriptor.TYPE_SINT32:'sint32',d.FieldDescriptor.TYPE_SINT64:'sint64'}

def emit_file(fd, svc_name, methods, extra=()):
    want = []  # top-level descriptors
    seen = set()
    def top(desc):
        while desc.containing_type is not None: desc = desc.containing_type
        return desc
    def need(desc):
        if desc.full_name in seen: return
        if desc.file is not fd:
            ext.add(desc.file.name); foreign.append(desc); return
        t = top(desc)
        if t.full_name in seen: return
        seen.add(t.full_name); want.append(t)
        walk(t)
    def walk(m):
        if isinstance(m, d.EnumDescriptor): return
        for f in m.fields:
            if f.message_type is not None and f.message_type.name not in CUT and not f.message_type.GetOptions().map_entry: need(f.message_type)
            if f.message_type is not None and f.message_type.GetOptions().map_entry:
                v = f.message_type.fields_by_name['value']
                if v.message_type: need(v.message_type)
                if v.enum_type: need(v.enum_type)
            if f.enum_type is not None: need(f.enum_type)
        for n in m.nested_types:
            if not n.GetOptions().map_entry: walk(n)
    ext = set()
    foreign = []
    for desc in extra:
        need(desc)
    svc = fd.services_by_name[svc_name]
    for name in methods:
        m = svc.methods_by_name[name]
        need(m.input_type); need(m.output_type)
    return svc, want, ext, foreign

def tname(f, scope):
    if f.message_type is not None:
        if f.message_type.GetOptions().map_entry:
            k = f.message_type.fields_by_name['key']; v = f.message_type.fields_by_name['value']
            return 'map<%s, %s>' % (tname(k, scope), tname(v, scope))
        return '.' + f.message_type.full_name
    if f.enum_type is not None: return '.' + f.enum_type.full_name
    return TYPES[f.type]

def render_enum(e, ind):
    out = [f'{ind}enum {e.name} {{']
    for v in e.values: out.append(f'{ind}  {v.name} = {v.number};')
    out.append(f'{ind}}}'); return out

def render_msg(m, ind=''):
    out = [f'{ind}message {m.name} {{']
    for e in m.enum_types: out += render_enum(e, ind + '  ')
    for n in m.nested_types:
        if not n.GetOptions().map_entry: out += render_msg(n, ind + '  ')
    oneofs = {}
    for f in m.fields:
        if f.message_type is not None and f.message_type.name in CUT and not f.message_type.GetOptions().map_entry: continue
        o = f.containing_oneof
        if o is not None and not (o.name.startswith('_') and len(o.fields) == 1):
            oneofs.setdefault(o.name, []).append(f); continue
        label = ''
        if f.is_repeated and not (f.message_type and f.message_type.GetOptions().map_entry): label = 'repeated '
        elif o is not None: label = 'optional '
        out.append(f'{ind}  {label}{tname(f, m)} {f.name} = {f.number};')
    for name, fs in oneofs.items():
        out.append(f'{ind}  oneof {name} {{')
        for f in fs: out.append(f'{ind}    {tname(f, m)} {f.name} = {f.number};')
        out.append(f'{ind}  }}')
    out.append(f'{ind}}}'); return out

def render(fd, svc, want, ext, header):
    out = header + ['syntax = "proto3";', '', f'package {fd.package};', '']
    for e in sorted(ext): out.append(f'import "{e}";')
    out.append('')
    for t in sorted(want, key=lambda t: t.name):
        out += (render_enum(t, '') if isinstance(t, d.EnumDescriptor) else render_msg(t)) + ['']
    out.append(f'service {svc.name} {{')
    for m in svc.methods:
        if m.name in methods_of[svc.name]:
            cs = 'stream ' if m.client_streaming else ''; ss = 'stream ' if m.server_streaming else ''
            out.append(f'  rpc {m.name}({cs}.{m.input_type.full_name}) returns ({ss}.{m.output_type.full_name});')
    out.append('}')
    return '\n'.join(out) + '\n'

methods_of = {'ModalClient': API_METHODS, 'TaskCommandRouter': TCR_METHODS}
import modal_version
hdr = lambda f: [f'// A subset of modal_proto/{f} as published in the `modal` Python package', f'// {modal_version.__version__} (PyPI), rendered from the file descriptor the package ships', '// (modal_proto/*_pb2.py) by shared/holm-modal-proto/regen/emit.py: the same', '// packages, messages, field numbers and services, with only what holm and its', '// stand-in use. Modal says this API is not public: it can change without notice.', '']
svc2, want2, ext2, foreign = emit_file(tcr.DESCRIPTOR, 'TaskCommandRouter', TCR_METHODS)
svc, want, ext, _ = emit_file(api_pb2.DESCRIPTOR, 'ModalClient', API_METHODS, foreign)
open(sys.argv[4] + '/api.proto','w').write(render(api_pb2.DESCRIPTOR, svc, want, ext, hdr('api.proto')))
open(sys.argv[4] + '/task_command_router.proto','w').write(render(tcr.DESCRIPTOR, svc2, want2, ext2, hdr('task_command_router.proto')))
