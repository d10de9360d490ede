package protorow

import (
	"context"
	"fmt"
	"maps"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// schemaFile is the name the registry schema is compiled under. Registry
// schemas have no file name of their own; references are keyed by their
// import path, which never looks like this.
const schemaFile = "<registry-schema>.proto"

// compile parses and links the schema with its references. Imports of
// google/protobuf/*.proto that refs does not provide resolve to the
// well-known types compiled into protocompile, and the Confluent known
// dependencies to builtinImports.
func compile(schema string, refs map[string]string) (protoreflect.FileDescriptor, error) {
	srcs := make(map[string]string, len(refs)+len(builtinImports)+1)
	maps.Copy(srcs, builtinImports)
	maps.Copy(srcs, refs)
	srcs[schemaFile] = schema
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(srcs),
		}),
	}
	files, err := c.Compile(context.Background(), schemaFile)
	if err != nil {
		return nil, fmt.Errorf("compile protobuf schema: %w", err)
	}
	return files[0], nil
}
