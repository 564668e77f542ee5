# Included after SoapySDR's project(): its DLL is SoapySDR.dll, as PothosSDR names
# it and rxnode.exe delay-loads it (mingw would say libSoapySDR.dll); the import
# library keeps mingw's libSoapySDR.dll.a. See scripts/windows/radio-under-wine.sh.
set(CMAKE_SHARED_LIBRARY_PREFIX "")
set(CMAKE_IMPORT_LIBRARY_PREFIX "lib")
