; Card Wallet Worker's additions to electron-builder's NSIS installer (nsis.include in
; electron-builder.yml; checked by test/packaging/installer-and-signing.test.ts).

!include LogicLib.nsh

!macro customInstall
  ; Windows installs the Smart Card service (SCardSvr) as manual (trigger) start: it runs only
  ; while a reader is plugged in and stops when the last one is unplugged, and then the reader
  ; needs to be found again. An install for all users runs elevated: set the service to start
  ; automatically, once, and start it. An install for one user is not elevated; the app then
  ; shows "starts only with a reader" with a button that asks for an administrator when the
  ; operator clicks it (main/smart-card-service.ts). Failures change nothing else: the app
  ; reads the service's state itself.
  ${If} $installMode == "all"
    DetailPrint "Setting the Smart Card service (SCardSvr) to start automatically"
    nsExec::ExecToLog '"$SYSDIR\sc.exe" config SCardSvr start= auto'
    Pop $0
    nsExec::ExecToLog '"$SYSDIR\sc.exe" start SCardSvr'
    Pop $0
  ${EndIf}
!macroend
