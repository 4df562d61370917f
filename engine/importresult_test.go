package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/internal/export"
)

// ImportResult carries every field of the export package's result, and
// marshals to the same JSON: `migrate import --summary-json` wrote that
// type's JSON before the verb moved into the engine.
func TestImportResultMatchesExport(t *testing.T) {
	t.Parallel()
	var in export.ImportResult
	v := reflect.ValueOf(&in).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name)
		case reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.5)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s: kind %s not filled by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	out := importResult(&in)
	if out.Request == nil || out.Request != (*dynamodb.ImportTableInput)(in.Request) {
		t.Error("the request is not carried over")
	}
	want, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("engine.ImportResult marshals to\n%s\nexport.ImportResult to\n%s", got, want)
	}
	if v.NumField() != reflect.TypeOf(ImportResult{}).NumField() {
		t.Errorf("export.ImportResult has %d fields, ImportResult %d", v.NumField(), reflect.TypeOf(ImportResult{}).NumField())
	}
	if importResult(nil) != nil {
		t.Error("a nil result converts to a non-nil one")
	}
}
